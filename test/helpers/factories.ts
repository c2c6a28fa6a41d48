// Factories for identity tests: rows are inserted directly (fast), sign-in
// goes through HTTP (the real path).
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { hashPassword } from '../../core/identity/password.ts';
import { insertUser, type User } from '../../core/identity/users.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import { insertTenant, type Tenant } from '../../core/tenancy/tenants.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { siteSchema as siteSchema, siteColumns } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import type { TestApp } from './app.ts';

export const password = 'correct horse battery staple';
let passwordHash: Promise<string> | undefined;

const unique = () => randomBytes(4).toString('hex');

export async function newUser(
  t: TestApp,
  fields: Partial<{ email: string; full_name: string; email_verified: boolean; is_global_admin: boolean }> = {},
): Promise<User> {
  const created = await insertUser(t.services.db, {
    email: fields.email ?? `user-${unique()}@example.com`,
    password,
    password_hash: await (passwordHash ??= hashPassword(password)),
    full_name: fields.full_name ?? 'Test User',
    email_verified: fields.email_verified ?? true,
  });
  if (fields.is_global_admin) {
    await t.services.db.query(sql.typeAlias('void')`update users set is_global_admin = true where id = ${created.id}`);
    return { ...created, is_global_admin: true };
  }
  return created;
}

export type Tokens = { access_token: string; refresh_token: string; expires_in: number; token_type: string };

export async function login(t: TestApp, email: string, secret = password): Promise<Tokens> {
  const res = await request(t.app)
    .post('/auth/login')
    .type('form')
    .send({ username: email, password: secret, grant_type: 'password' });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Tokens;
}

export type Caller = { user: User; token: string; auth: { Authorization: string } };

/** A signed-in user, optionally a member of a tenant with a role and assigned to sites. */
export async function signedIn(
  t: TestApp,
  options: { globalAdmin?: boolean; tenant?: Tenant; role?: 'admin' | 'editor' | 'author'; sites?: Site[] } = {},
): Promise<Caller> {
  const user = await newUser(t, { is_global_admin: options.globalAdmin ?? false });
  if (options.tenant) await addMember(t.services.db, options.tenant.id, user.id, options.role ?? 'author');
  for (const site of options.sites ?? []) await assignToSite(t, site, user.id);
  const { access_token } = await login(t, user.email);
  return { user, token: access_token, auth: { Authorization: `Bearer ${access_token}` } };
}

export const newTenant = (t: TestApp, name = `Tenant ${unique()}`) => insertTenant(t.services.db, { name });

export async function newSite(t: TestApp, tenant: Tenant, slug = `site-${unique()}`): Promise<Site> {
  return t.services.db.one(sql.type(siteSchema)`
    insert into sites (tenant_id, name, slug) values (${tenant.id}, ${`Site ${slug}`}, ${slug}) returning ${siteColumns}`);
}

export async function assignToSite(t: TestApp, site: Site, userId: string): Promise<void> {
  await t.services.db.query(sql.typeAlias('void')`
    insert into site_users (tenant_id, site_id, user_id) values (${site.tenant_id}, ${site.id}, ${userId})`);
}

/** A service account of the tenant and a client-credentials token for it. */
export async function serviceAccount(
  t: TestApp,
  tenant: Tenant,
  scopes: string[] = ['sites:read'],
  admin?: Caller,
  extra: { test_mode?: boolean } = {},
) {
  const creator = admin ?? (await signedIn(t, { tenant, role: 'admin' }));
  const created = await request(t.app)
    .post('/api/service-accounts/')
    .set(creator.auth)
    .send({ tenant_id: tenant.id, name: 'bot', scopes, ...extra });
  if (created.status !== 201) throw new Error(`service account: ${created.status} ${JSON.stringify(created.body)}`);
  const token = await request(t.app).post('/auth/token').type('form').send({
    grant_type: 'client_credentials',
    client_id: created.body.client_id,
    client_secret: created.body.client_secret,
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
  return {
    account: created.body as { id: string; client_id: string; client_secret: string },
    token: token.body.access_token as string,
    auth: { Authorization: `Bearer ${token.body.access_token}` },
  };
}
