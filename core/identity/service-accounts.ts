// Service accounts: machine clients of one tenant. Tenant admins manage their
// tenant's; the secret is shown once, at creation or rotation, and stored as
// a SHA-256. POST /auth/token (client credentials) exchanges it for an access
// token limited to the tenant and the account's scopes.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { ForeignKeyIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { requireTenantAdmin, requireUser, scopes } from './access.ts';
import { digest, newSecret, secretFingerprint } from './secrets.ts';
import { signToken } from './tokens.ts';

export const scope = z.enum(scopes);

export const serviceAccountSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    scopes: z.array(scope),
    client_id: z.string(),
    status: z.enum(['active', 'disabled']),
    test_mode: z
      .boolean()
      .describe(
        'Its jobs run on the local stand-ins at no charge, marked as test jobs (as Stripe’s test keys); fixed when it is made',
      ),
    last_used_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'ServiceAccount' });

export const serviceAccountWithSecretSchema = serviceAccountSchema
  .extend({ client_secret: z.string().describe('Shown only now; store it safely') })
  .meta({ id: 'ServiceAccountWithSecret' });

type ServiceAccount = z.infer<typeof serviceAccountSchema>;

const columns = sql.fragment`a.id, a.tenant_id, a.name, a.description, a.scopes, a.client_id, a.status, a.test_mode, a.last_used_at, a.created_at`;

/** Tenants whose service accounts the caller manages. */
function managed(actor: Actor) {
  const user = requireUser(actor);
  if (user.isGlobalAdmin) return sql.fragment`true`;
  return sql.fragment`exists (select 1 from memberships m where m.tenant_id = a.tenant_id and m.user_id = ${user.userId} and m.role = 'admin')`;
}

export async function listServiceAccounts(
  db: CommonQueryMethods,
  actor: Actor,
  query: PageQuery & { tenant_id?: string | undefined },
) {
  const where = sql.fragment`${managed(actor)} and ${query.tenant_id ? sql.fragment`a.tenant_id = ${query.tenant_id}` : sql.fragment`true`}`;
  const rows = await db.any(sql.type(serviceAccountSchema)`
    select ${columns} from service_accounts a where ${where} and ${after(query, 'a')}
    order by a.created_at, a.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from service_accounts a where ${where}`));
}

async function load(db: CommonQueryMethods, actor: Actor, id: string): Promise<ServiceAccount> {
  requireUser(actor);
  const found = await db.maybeOne(
    sql.type(serviceAccountSchema)`select ${columns} from service_accounts a where a.id = ${id}`,
  );
  if (!found) throw notFound('No such service account.');
  await requireTenantAdmin(db, actor, found.tenant_id).catch((error: Problem) => {
    throw error.status === 404 ? notFound('No such service account.') : error;
  });
  return found;
}

export const getServiceAccount = load;

export type NewServiceAccount = {
  tenant_id?: string | undefined;
  name: string;
  description?: string | undefined;
  scopes: string[];
  test_mode?: boolean | undefined;
};

/** The tenant to create in: the one named, or the caller's only administered tenant. */
async function targetTenant(db: CommonQueryMethods, actor: Actor, tenantId: string | undefined): Promise<string> {
  const user = requireUser(actor);
  if (tenantId) return tenantId;
  const administered = await db.anyFirst(sql.type(z.object({ tenant_id: z.string() }))`
    select tenant_id from memberships where user_id = ${user.userId} and role = 'admin'`);
  if (administered.length !== 1 || !administered[0]) {
    throw new Problem(422, 'Say which tenant the account belongs to.', {
      errors: [{ path: 'body.tenant_id', message: 'required' }],
    });
  }
  return administered[0];
}

const newClientId = () => `sa_${randomBytes(12).toString('hex')}`;

export async function createServiceAccount(db: CommonQueryMethods, actor: Actor, input: NewServiceAccount) {
  const tenantId = await targetTenant(db, actor, input.tenant_id);
  await requireTenantAdmin(db, actor, tenantId);
  const secret = newSecret('sas_');
  const created = await db
    .one(
      sql.type(serviceAccountSchema)`
      insert into service_accounts as a (tenant_id, name, description, scopes, client_id, secret_hash, created_by, test_mode)
      values (${tenantId}, ${input.name}, ${input.description ?? ''}, ${sql.array(input.scopes, 'text')}, ${newClientId()},
              ${sql.binary(digest(secret))}, ${actor.kind === 'user' ? actor.userId : null}, ${input.test_mode ?? false})
      returning ${columns}`,
    )
    .catch((error: unknown) => {
      // A global admin passes requireTenantAdmin for any tenant id, even one that does not exist.
      if (error instanceof ForeignKeyIntegrityConstraintViolationError) throw notFound('No such tenant.');
      throw error;
    });
  return { ...created, client_secret: secret };
}

export type ServiceAccountChanges = Partial<{
  name: string;
  description: string;
  scopes: string[];
  status: 'active' | 'disabled';
  rotate_secret: boolean;
}>;

export async function updateServiceAccount(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  changes: ServiceAccountChanges,
) {
  await load(db, actor, id);
  const secret = changes.rotate_secret ? newSecret('sas_') : null;
  const updated = await db.one(sql.type(serviceAccountSchema)`
    update service_accounts as a set
      name = coalesce(${changes.name ?? null}, name),
      description = coalesce(${changes.description ?? null}, description),
      scopes = coalesce(${changes.scopes ? sql.array(changes.scopes, 'text') : null}::text[], scopes),
      status = coalesce(${changes.status ?? null}, status),
      secret_hash = coalesce(${secret ? sql.binary(digest(secret)) : null}::bytea, secret_hash)
    where a.id = ${id}
    returning ${columns}`);
  return secret ? { ...updated, client_secret: secret } : updated;
}

export async function deleteServiceAccount(db: CommonQueryMethods, actor: Actor, id: string): Promise<void> {
  await load(db, actor, id);
  await db.query(sql.typeAlias('void')`delete from service_accounts where id = ${id}`);
}

const invalidClient = () =>
  new Problem(401, 'The client credentials are wrong or the account is disabled.', {
    type: problemType('invalid-client'),
    title: 'Invalid client',
    extensions: { error: 'invalid_client' },
    headers: { 'WWW-Authenticate': 'Basic realm="token"' },
  });

const client = z.object({
  id: z.string(),
  tenant_id: z.string(),
  scopes: z.array(z.string()),
  secret_hash: z.instanceof(Buffer),
});

export const clientTokenSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int(),
    scope: z.string().describe('Granted scopes, space-separated'),
  })
  .meta({ id: 'ClientCredentialsToken' });

/** OAuth 2.0 client-credentials grant: a short-lived access token for the account. */
export async function clientCredentials(
  db: CommonQueryMethods,
  config: Config,
  clientId: string,
  clientSecret: string,
  requested?: string[],
) {
  const account = await db.maybeOne(sql.type(client)`
    select a.id, a.tenant_id, a.scopes, a.secret_hash from service_accounts a join tenants t on t.id = a.tenant_id
    where a.client_id = ${clientId} and a.status = 'active' and t.status = 'active'`);
  const presented = digest(clientSecret);
  if (!account || !timingSafeEqual(presented, account.secret_hash)) throw invalidClient();
  const unknown = (requested ?? []).filter((wanted) => !account.scopes.includes(wanted));
  if (unknown.length > 0) {
    throw new Problem(400, `The account does not have these scopes: ${unknown.join(' ')}.`, {
      type: problemType('invalid-scope'),
      extensions: { error: 'invalid_scope' },
    });
  }
  const granted = requested?.length ? requested : account.scopes;
  const ttl = config.auth.accessTokenTtlSeconds;
  const { token } = signToken(config.auth, 'access', account.id, ttl, {
    act: 'service',
    tenant_id: account.tenant_id,
    scopes: granted,
    secret_fingerprint: secretFingerprint(account.secret_hash),
  });
  await db.query(sql.typeAlias('void')`update service_accounts set last_used_at = now() where id = ${account.id}`);
  return { access_token: token, token_type: 'bearer' as const, expires_in: ttl, scope: granted.join(' ') };
}
