// The one Stripe client of a process, built from the configuration on first
// use. Without a key the payment endpoints answer 503 naming the setting,
// and everything else runs.
import Stripe from 'stripe';
import type { Config } from '../config.ts';
import { Problem, problemType } from '../errors.ts';

const clients = new WeakMap<Config['stripe'], Stripe>();

export const notConfigured = (setting: string) =>
  new Problem(503, `Payments are not configured: set ${setting}.`, {
    type: problemType('payments-not-configured'),
    title: 'Payments not configured',
    extensions: { setting },
  });

/** A client for Stripe's API at STRIPE_API_URL (a fake on 127.0.0.1 in tests). */
export function stripeClient(config: Config): Stripe {
  const settings = config.stripe;
  if (!settings.secretKey) throw notConfigured('STRIPE_SECRET_KEY');
  let client = clients.get(settings);
  if (!client) {
    const url = new URL(settings.apiUrl);
    client = new Stripe(settings.secretKey, {
      host: url.hostname,
      port: url.port || (url.protocol === 'http:' ? 80 : 443),
      protocol: url.protocol === 'http:' ? 'http' : 'https',
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
    });
    clients.set(settings, client);
  }
  return client;
}

/** A Stripe API call that failed: the caller sees 502, never Stripe's own message about our keys. */
export async function callStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof Problem) throw error;
    const stripeError = error as { type?: string; statusCode?: number; code?: string };
    throw new Problem(502, `Stripe could not ${what}.`, {
      type: problemType('payment-provider-error'),
      title: 'Payment provider error',
      extensions: { provider_code: stripeError.code ?? stripeError.type ?? null },
    });
  }
}

/** The id of an expandable field of a Stripe object (an id, or the object when expanded). */
export const idOf = (value: string | { id: string } | null | undefined): string | null =>
  typeof value === 'string' ? value : (value?.id ?? null);
