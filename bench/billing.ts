// The Stripe webhook under load: signed checkout.session.completed events for
// distinct payments, 30% of the deliveries copies of events already sent (as
// Stripe's retries are), 16 at a time. Then the ledger is read back: every
// payment granted exactly once.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { z } from 'zod';
import { createPool, sql } from '../db/pool.ts';
import { api, benchSite } from './http.ts';
import type { ApiLauncher } from './request-path.ts';

const secret = 'whsec_bench_0123456789abcdef';

export async function webhookFigures(
  url: string,
  token: string,
  databaseUrl: string,
  launchApi: ApiLauncher,
): Promise<[string, string][]> {
  const site = await benchSite(url, token, 'Webhook bench');
  const me = await api<{ id: string }>(`${url}/auth/currentuser`, token, 'GET');
  const db = await createPool(databaseUrl, { maxPoolSize: 2 });
  const payments = 1400;
  const duplicates = Math.round((payments * 0.3) / 0.7);
  const ids = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    insert into payments (tenant_id, site_id, user_id, package_name, credits, amount, currency)
    select s.tenant_id, s.id, ${me.id}, 'bench', 10, 500, 'usd' from sites s, generate_series(1, ${payments})
    where s.slug = ${site.slug} returning id`);
  const events = ids.map((id) => {
    const event = {
      id: `evt_${randomUUID()}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: `cs_${id}`,
          object: 'checkout.session',
          mode: 'payment',
          payment_status: 'paid',
          client_reference_id: id,
          payment_intent: `pi_${id}`,
        },
      },
    };
    const payload = JSON.stringify(event);
    return { payload, header: Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
  });
  // Each copy goes out after its original, as a retry would.
  const deliveries = [...events];
  for (let i = 0; i < duplicates; i++) {
    const at = Math.floor(Math.random() * deliveries.length) + 1;
    deliveries.splice(
      Math.min(at + 20, deliveries.length),
      0,
      events[Math.floor((at / deliveries.length) * events.length)]!,
    );
  }
  const hooked = await launchApi(databaseUrl, { STRIPE_WEBHOOK_SECRET: secret });
  const outcomes = new Map<string, number>();
  let failures = 0;
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++]!;
        const res = await fetch(`${hooked.url}/payments/webhook`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Stripe-Signature': delivery.header },
          body: delivery.payload,
        });
        const body = (await res.json()) as { outcome?: string };
        if (!res.ok) failures++;
        outcomes.set(
          body.outcome ?? `status ${res.status}`,
          (outcomes.get(body.outcome ?? `status ${res.status}`) ?? 0) + 1,
        );
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  await hooked.stop();
  const granted = await db.one(sql.type(z.object({ entries: z.number(), payments: z.number(), twice: z.number() }))`
    select count(*)::int as entries, count(distinct e.payment_id)::int as payments,
           (select count(*)::int from (select payment_id from credit_entries where kind = 'purchase' and payment_id = any(${sql.array(ids, 'uuid')})
                                       group by payment_id having count(*) > 1) x) as twice
    from credit_entries e where e.kind = 'purchase' and e.payment_id = any(${sql.array(ids, 'uuid')})`);
  await db.end();
  return [
    [
      `POST /payments/webhook, ${deliveries.length} signed events (${duplicates} copies, 30%), 16 at a time`,
      `${(deliveries.length / seconds).toFixed(0)} events/s (target ≥ 300); ${failures} failed; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`,
    ],
    [
      'payments granted after the webhook load',
      `${granted.payments} of ${payments} once, ${granted.twice} twice (${granted.entries} purchase entries)`,
    ],
  ];
}
