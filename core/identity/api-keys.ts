// API keys: long-lived bearer credentials an app can keep instead of
// refreshing 15-minute tokens. A tenant's admins make them for one of the
// tenant's service accounts or one of its members; a key acts as its holder,
// narrowed to the key's tenant, scopes and sites, and never with more than the
// holder has at the time of the request (a removed scope, a removed member, a
// disabled account end what the key could do with them at once).
//
// Format: `cap_live_` (or `cap_test_` for a test-mode service account) and 40
// characters of base64url (240 random bits), e.g.
// `cap_live_3q2-7wE…`. The fixed prefix lets secret scanners (GitHub's,
// gitleaks, trufflehog) find a leaked key by a pattern,
// `cap_(live|test)_[A-Za-z0-9_-]{40}`, and lets the request path tell a key
// from a JWT (which begins `eyJ`) without parsing it. The key is shown once,
// at creation; only its SHA-256 is stored (see db/migrations/0055).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor, ApiKeyLimits } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { requireTenantAdmin, scopes, type Scope } from './access.ts';
import { digest } from './secrets.ts';
import type { Claims } from './tokens.ts';
import type { Config } from '../config.ts';

export const apiKeyPattern = /^cap_(live|test)_[A-Za-z0-9_-]{40}$/;

/** Whether a bearer credential is meant as an API key (by its prefix): anything else is taken for a JWT. */
export const looksLikeApiKey = (credential: string): boolean => credential.startsWith('cap_');

const newKey = (prefix: string) => `${prefix}${randomBytes(30).toString('base64url')}`;

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    hint: z.string().describe('The key’s prefix and last four characters, to tell keys apart: `cap_live_…x9Qz`'),
    holder: z.object({
      kind: z.enum(['service_account', 'user']),
      id: z.uuid(),
    }),
    scopes: z.array(z.enum(scopes)),
    site_ids: z.array(z.uuid()).nullable().describe('The sites the key reaches; null: every site its holder reaches'),
    created_at: timestamp,
    last_used_at: timestamp.nullable().describe('Updated at most once a minute'),
    expires_at: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

export const apiKeyWithSecretSchema = apiKeySchema
  .extend({ key: z.string().describe('The key, shown only now: send it as `Authorization: Bearer <key>`') })
  .meta({ id: 'ApiKeyWithSecret' });

const columns = sql.fragment`k.id, k.tenant_id, k.name, k.prefix || '…' || k.last_four as hint,
  json_build_object('kind', case when k.service_account_id is null then 'user' else 'service_account' end,
                    'id', coalesce(k.service_account_id, k.user_id)) as holder,
  k.scopes, k.site_ids, k.created_at, k.last_used_at, k.expires_at`;

export type NewApiKey = {
  name: string;
  service_account_id?: string | undefined;
  user_id?: string | undefined;
  scopes: Scope[];
  site_ids?: string[] | null | undefined;
  expires_at?: string | null | undefined;
};

const invalid = (path: string, message: string) =>
  new Problem(422, 'The key cannot be made as asked.', { errors: [{ path: `body.${path}`, message }] });

/** The holder's prefix and what it allows: a service account's scopes, or null for a member (their role decides). */
async function checkHolder(
  db: CommonQueryMethods,
  tenantId: string,
  input: NewApiKey,
): Promise<{ prefix: string; allowed: string[] | null }> {
  if (input.service_account_id) {
    const account = await db.maybeOne(sql.type(z.object({ scopes: z.array(z.string()), test_mode: z.boolean() }))`
      select scopes, test_mode from service_accounts where id = ${input.service_account_id} and tenant_id = ${tenantId}`);
    if (!account) throw invalid('service_account_id', 'not a service account of this tenant');
    return { prefix: account.test_mode ? 'cap_test_' : 'cap_live_', allowed: account.scopes };
  }
  const member = await db.maybeOne(sql.type(z.object({ user_id: z.string() }))`
    select user_id from memberships where tenant_id = ${tenantId} and user_id = ${input.user_id!}`);
  if (!member) throw invalid('user_id', 'not a member of this tenant');
  return { prefix: 'cap_live_', allowed: null };
}

/** Sites named that the holder does not reach in this tenant. */
async function unreachedSites(db: CommonQueryMethods, tenantId: string, input: NewApiKey): Promise<string[]> {
  const wanted = input.site_ids ?? [];
  if (wanted.length === 0) return [];
  const holderReaches = input.service_account_id
    ? sql.fragment`true`
    : sql.fragment`exists (select 1 from memberships m where m.tenant_id = s.tenant_id and m.user_id = ${input.user_id!}
        and (m.role = 'admin' or exists (select 1 from site_users su where su.site_id = s.id and su.user_id = m.user_id)))`;
  const reached = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    select s.id from sites s where s.id = any(${sql.array(wanted, 'uuid')}) and s.tenant_id = ${tenantId} and ${holderReaches}`);
  return wanted.filter((id) => !reached.includes(id));
}

export async function createApiKey(db: CommonQueryMethods, actor: Actor, tenantId: string, input: NewApiKey) {
  await requireTenantAdmin(db, actor, tenantId);
  const { prefix, allowed } = await checkHolder(db, tenantId, input);
  const beyond = allowed ? input.scopes.filter((scope) => !allowed.includes(scope)) : [];
  if (beyond.length > 0) throw invalid('scopes', `the service account does not have ${beyond.join(', ')}`);
  const unreached = await unreachedSites(db, tenantId, input);
  if (unreached.length > 0) throw invalid('site_ids', `the holder does not reach ${unreached.join(', ')}`);
  if (input.expires_at && Date.parse(input.expires_at) <= Date.now())
    throw invalid('expires_at', 'must be in the future');
  const key = newKey(prefix);
  const created = await db.one(sql.type(apiKeySchema)`
    insert into api_keys as k (tenant_id, service_account_id, user_id, name, prefix, last_four, secret_hash, scopes,
                               site_ids, created_by, expires_at)
    values (${tenantId}, ${input.service_account_id ?? null}, ${input.user_id ?? null}, ${input.name}, ${prefix},
            ${key.slice(-4)}, ${sql.binary(digest(key))}, ${sql.array(input.scopes, 'text')},
            ${input.site_ids?.length ? sql.array(input.site_ids, 'uuid') : null}, ${actor.kind === 'user' ? actor.userId : null},
            ${input.expires_at ?? null})
    returning ${columns}`);
  return { ...created, key };
}

export async function listApiKeys(db: CommonQueryMethods, actor: Actor, tenantId: string, query: PageQuery) {
  await requireTenantAdmin(db, actor, tenantId);
  const where = sql.fragment`k.tenant_id = ${tenantId}`;
  const rows = await db.any(sql.type(apiKeySchema)`
    select ${columns} from api_keys k where ${where} and ${after(query, 'k')}
    order by k.created_at, k.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from api_keys k where ${where}`));
}

/** Deletes the key; every API process forgets it at once (the `access_changed` trigger of 0055). */
export async function revokeApiKey(db: CommonQueryMethods, actor: Actor, tenantId: string, id: string): Promise<void> {
  await requireTenantAdmin(db, actor, tenantId);
  const gone = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    delete from api_keys where id = ${id} and tenant_id = ${tenantId} returning id`);
  if (!gone) throw notFound('No such API key.');
}

const liveKey = z.object({
  id: z.string(),
  tenant_id: z.string(),
  service_account_id: z.string().nullable(),
  user_id: z.string().nullable(),
  scopes: z.array(z.string()),
  site_ids: z.array(z.string()).nullable(),
  account_scopes: z.array(z.string()).nullable(),
  test_mode: z.boolean(),
  created_at: timestamp,
  expires_at: timestamp.nullable(),
});

export type LiveKey = z.infer<typeof liveKey>;

/**
 * The key with this hash, if it is unexpired and its holder can still act in
 * its tenant: an active account, or an active user who is still a member
 * (the site they reach is checked per request, as for their own token).
 */
export function findLiveKey(db: CommonQueryMethods, hash: Buffer): Promise<LiveKey | null> {
  return db.maybeOne(sql.type(liveKey)`
    select k.id, k.tenant_id, k.service_account_id, k.user_id, k.scopes, k.site_ids, a.scopes as account_scopes,
           coalesce(a.test_mode, false) as test_mode, k.created_at, k.expires_at
    from api_keys k
    join tenants t on t.id = k.tenant_id and t.status = 'active'
    left join service_accounts a on a.id = k.service_account_id and a.status = 'active'
    left join users u on u.id = k.user_id and u.status = 'active'
    where k.secret_hash = ${sql.binary(hash)} and (k.expires_at is null or k.expires_at > now())
      and (a.id is not null
           or (u.id is not null and exists (select 1 from memberships m where m.tenant_id = k.tenant_id and m.user_id = u.id)))`);
}

/** The caller a live key stands for. */
export function keyActor(key: LiveKey): Actor {
  const limits: ApiKeyLimits = { id: key.id, tenantId: key.tenant_id, scopes: key.scopes, siteIds: key.site_ids };
  if (key.service_account_id) {
    return {
      kind: 'service',
      serviceAccountId: key.service_account_id,
      tenantId: key.tenant_id,
      // What the key names and the account still has.
      scopes: key.scopes.filter((scope) => key.account_scopes?.includes(scope)),
      testMode: key.test_mode,
      apiKey: limits,
    };
  }
  // A key never carries its holder's global administration: it acts in its tenant only.
  return { kind: 'user', userId: key.user_id!, sessionId: `api-key:${key.id}`, isGlobalAdmin: false, apiKey: limits };
}

/** What /auth/token-info and the routes see of a key in place of a token's claims; a key without expiry says 9999. */
export const keyClaims = (config: Config, key: LiveKey): Claims => ({
  typ: 'access',
  sub: key.service_account_id ?? key.user_id!,
  jti: key.id,
  iat: Math.floor(Date.parse(key.created_at) / 1000),
  exp: Math.floor((key.expires_at ? Date.parse(key.expires_at) : Date.parse('9999-12-31T23:59:59Z')) / 1000),
  iss: config.auth.issuer,
  aud: config.auth.audience,
  act: key.service_account_id ? 'service' : 'user',
  tenant_id: key.tenant_id,
  scopes: key.scopes,
});

/** Records a key's use; the caller asks at most once a minute per key (core/access-cache.ts). */
export async function touchApiKey(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update api_keys set last_used_at = now()
    where id = ${id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`);
}
