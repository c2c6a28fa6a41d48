// Each tenant's key for signing its job webhooks, in the Standard Webhooks
// form: `whsec_` and 32 random bytes in base64. Made on first use (an admin
// reading it, or the first delivery); tenant admins read and rotate it. After
// a rotation the previous key still signs beside the new one for a grace
// period (each delivery then carries two signatures, and a receiver that
// knows either accepts it), so receivers switch without losing deliveries.
// Kept as it is, not hashed: signing needs the key itself.
import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { requireTenantAdmin } from '../identity/access.ts';
import { timestamp } from '../timestamp.ts';

export const webhookSecretSchema = z
  .object({
    tenant_id: z.uuid(),
    secret: z.string().describe('`whsec_` and the key in base64, as Standard Webhooks libraries take it'),
    previous_expires_at: timestamp
      .nullable()
      .describe('Until then deliveries are also signed with the secret this one replaced; null when they are not'),
    created_at: timestamp,
    rotated_at: timestamp.nullable(),
  })
  .meta({ id: 'WebhookSecret' });

export type WebhookSecret = z.infer<typeof webhookSecretSchema>;

const stored = webhookSecretSchema.extend({ previous_secret: z.string().nullable() });

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const columns = sql.fragment`tenant_id, secret, previous_secret,
  case when previous_expires_at > now() then previous_expires_at end as previous_expires_at, created_at, rotated_at`;

/** The tenant's secret, made if it has none yet; null for a tenant that does not exist. */
async function current(db: CommonQueryMethods, tenantId: string) {
  const read = () =>
    db.maybeOne(sql.type(stored)`select ${columns} from webhook_secrets where tenant_id = ${tenantId}`);
  const found = await read();
  if (found) return found;
  await db.query(sql.typeAlias('void')`
    insert into webhook_secrets (tenant_id, secret)
    select ${tenantId}, ${newSecret()} where exists (select from tenants where id = ${tenantId})
    on conflict (tenant_id) do nothing`);
  return read();
}

const visible = ({ previous_secret: _p, ...secret }: z.infer<typeof stored>): WebhookSecret => secret;

export async function readWebhookSecret(db: CommonQueryMethods, actor: Actor, tenantId: string) {
  await requireTenantAdmin(db, actor, tenantId);
  const found = await current(db, tenantId);
  // A global admin passes requireTenantAdmin for any id, even one of no tenant.
  if (!found) throw notFound('No such tenant.');
  return visible(found);
}

/** A new secret; the one it replaces keeps signing for `graceSeconds` (0: stops at once). */
export async function rotateWebhookSecret(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  graceSeconds: number,
) {
  await requireTenantAdmin(db, actor, tenantId);
  const rotated = await db.maybeOne(sql.type(stored)`
    insert into webhook_secrets as s (tenant_id, secret, rotated_at)
    select ${tenantId}, ${newSecret()}, now() where exists (select from tenants where id = ${tenantId})
    on conflict (tenant_id) do update set
      previous_secret = s.secret, previous_expires_at = now() + ${graceSeconds} * interval '1 second',
      secret = excluded.secret, rotated_at = now()
    returning ${columns}`);
  if (!rotated) throw notFound('No such tenant.');
  return visible(rotated);
}

/** The keys a delivery is signed with now: the current one, and the previous one during its grace period. */
export async function signingSecrets(db: CommonQueryMethods, tenantId: string): Promise<string[]> {
  const found = await current(db, tenantId);
  if (!found) return [];
  return found.previous_expires_at && found.previous_secret ? [found.secret, found.previous_secret] : [found.secret];
}

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each key, space-separated. */
export function signature(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
