// For each matrix route, a request that the most privileged caller would get
// a success for: fresh targets where the request changes or removes them.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { addMember } from '../../core/tenancy/memberships.ts';
import { allocateToTenant } from '../../core/credits/ledger.ts';
import { createServiceAccount } from '../../core/identity/service-accounts.ts';
import { createApiKey } from '../../core/identity/api-keys.ts';
import { createContentWebhook } from '../../core/webhooks/subscriptions.ts';
import { createPreviewToken } from '../../core/content/preview-tokens.ts';
import { sql } from '../../db/pool.ts';
import type { JobStatus } from '../../core/jobs/model.ts';
import { signedUrl, signingKey } from '../../core/media/urls.ts';
import { createStorage } from '../../core/storage/index.ts';
import { saveSystemPrompt } from '../../core/system-prompts/prompts.ts';
import { stripeClient } from '../../core/billing/stripe.ts';
import { verifyUpgrade } from '../../core/billing/subscriptions.ts';
import { assignToSite, newSite, newTenant, newUser, password } from '../helpers/factories.ts';
import { signWebhook } from '../helpers/fakes/replicate.ts';
import { signEvent } from '../helpers/fake-stripe.ts';
import { giveCredits, newJob } from '../helpers/jobs.ts';
import { makePdf } from '../helpers/pdf.ts';
import { agentRequests } from './agents.ts';
import type { World } from './world.ts';

export type MatrixRequest = {
  path: string;
  body?: Record<string, unknown>;
  /** Send the caller's refresh token, not its access token, as the bearer. */
  bearer?: 'refresh';
  /** Extra headers, and a body sent exactly as given (signed webhooks). */
  headers?: Record<string, string>;
  raw?: string;
  /** A file sent as multipart/form-data in the part named file. */
  file?: Buffer;
};

/** Replicate's webhook signing secret as the matrix app is configured with it (REPLICATE_WEBHOOK_SECRET). */
export const matrixWebhookSecret = `whsec_${Buffer.from('matrix-webhook-secret-0123456789').toString('base64')}`;

/** A job of tenant A's site, submitted by its admin (authors see only their own jobs). */
const jobOfA = (world: World, status: JobStatus = 'queued', extra: Parameters<typeof newJob>[2] = {}) =>
  newJob(world.t, world.siteA, { userId: world.userIds.tenant_admin!, status, ...extra });

/** A folder of site A made by its admin (authors may change only their own). */
const folderOfA = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into media_folders (tenant_id, site_id, name, created_by)
    values (${world.tenantA.id}, ${world.siteA.id}, ${`folder-${world.unique()}`}, ${world.userIds.tenant_admin!}) returning id`);

export const matrixStripeSecret = 'whsec_matrix_0123456789';

/** A credit package on sale. */
const packageOfWorld = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into credit_packages (name, credits, price, currency) values ('Matrix', 10, 100, 'usd') returning id`);

/** A fresh paid plan. */
const planOfWorld = (world: World) =>
  world.t.services.db.one(sql.type(z.object({ id: z.string(), stripe_price_id: z.string() }))`
    insert into plans (name, monthly_credits, price, stripe_price_id)
    values ('Matrix', 10, 500, ${`price_matrix${world.unique()}`}) returning id, stripe_price_id`);

const shop = { success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/' };

/** A Checkout Session of tenant A for a paid plan, completed by the customer. */
async function paidCheckoutOfA(world: World): Promise<string> {
  const plan = await planOfWorld(world);
  const metadata = { tenant_id: world.tenantA.id, plan_id: plan.id };
  const session = await stripeClient(world.t.services.config).checkout.sessions.create({
    mode: 'subscription',
    client_reference_id: world.tenantA.id,
    metadata,
    subscription_data: { metadata },
    line_items: [{ price: plan.stripe_price_id, quantity: 1 }],
    ...shop,
  });
  world.stripe.pay(session.id);
  return session.id;
}

/** Tenant A on a live paid plan (a subscription a cancel at period end leaves live). */
async function subscribedA(world: World): Promise<void> {
  const session = await paidCheckoutOfA(world);
  await verifyUpgrade(
    world.t.services.db,
    world.t.services.config,
    { tenantId: world.tenantA.id, role: 'admin' },
    session,
  );
}

/** A job kind of its own for each request that adds a price. */
const priceKind = (world: World) =>
  `matrix_${world
    .unique()
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '_')}`;

/** A fresh, inactive global price. */
const priceOfWorld = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into cost_settings (kind, unit, price, active) values (${priceKind(world)}, 'item', 1, false) returning id`);

const onePixelPng = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** Site A made public (its slug), for the public delivery endpoints: anyone, with a token or without, reads them. */
async function publicSiteA(world: World): Promise<string> {
  await world.t.services.db.query(
    sql.typeAlias('void')`update sites set visibility = 'public' where id = ${world.siteA.id}`,
  );
  return world.siteA.slug;
}

/** A media item of site A added by its admin (its file is not needed here). */
const mediaOfA = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status, created_by)
    values (${world.tenantA.id}, ${world.siteA.id}, 'image', 'image/png', ${`${world.tenantA.id}/${world.siteA.id}/matrix-${world.unique()}.png`}, 'ready',
            ${world.userIds.tenant_admin!}) returning id`);

/** Enough credits on site A for every caller who may submit a job (service accounts pay from the pool). */
async function creditEveryone(world: World) {
  for (const caller of ['author', 'editor', 'tenant_admin', 'global_admin'] as const)
    await giveCredits(world.t, world.siteA, 100, world.userIds[caller]);
  await giveCredits(world.t, world.siteA, 100);
}

/** A content type of site A, made by its admin (no fields, so any data fits). */
const typeOfA = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into content_types (tenant_id, site_id, name, api_id, created_by)
    values (${world.tenantA.id}, ${world.siteA.id}, 'Matrix type', ${`matrix_${world.unique()}`}, ${world.userIds.tenant_admin!})
    returning id`);

/** An element of site A made by its admin (authors may change only their own). */
const elementOfA = async (world: World) => {
  const typeId = await typeOfA(world);
  return world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into content_elements (tenant_id, site_id, type_id, schema_version, name, locale, created_by)
    values (${world.tenantA.id}, ${world.siteA.id}, ${typeId}, 1, 'Matrix element', 'en', ${world.userIds.tenant_admin!})
    returning id`);
};

/** A post of site A written by its admin (authors may change only their own). */
const postOfA = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into posts (tenant_id, site_id, title, slug, locale, author_id, created_by)
    values (${world.tenantA.id}, ${world.siteA.id}, 'Matrix post', ${`matrix-${world.unique()}`}, 'en',
            ${world.userIds.tenant_admin!}, ${world.userIds.tenant_admin!})
    returning id`);

/** A top-level page of site A made by its admin, at the end of the top level. */
const pageOfA = (world: World, parentId: string | null = null) => {
  const slug = `matrix-${world.unique()}`;
  return world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into pages (tenant_id, site_id, parent_id, position, slug, path, title, locale, created_by)
    select ${world.tenantA.id}, ${world.siteA.id}, ${parentId},
           (select count(*) from pages where site_id = ${world.siteA.id} and parent_id is not distinct from ${parentId}),
           ${slug}, coalesce((select path from pages where id = ${parentId}), '') || '/' || ${slug}, 'Matrix page', 'en',
           ${world.userIds.tenant_admin!}
    returning id`);
};

/** A page of site A with one element placed on it. */
const slotOfA = async (world: World) => {
  const pageId = await pageOfA(world);
  const elementId = await elementOfA(world);
  await world.t.services.db.query(sql.typeAlias('void')`
    insert into page_elements (page_id, element_id, site_id, position) values (${pageId}, ${elementId}, ${world.siteA.id}, 0)`);
  return { pageId, elementId };
};

/** An element or page of site A with two versions kept (history: drafts, issue 41). */
async function versionedOfA(world: World, kind: 'element' | 'page') {
  const id = kind === 'element' ? await elementOfA(world) : await pageOfA(world);
  const content =
    kind === 'element'
      ? [
          { name: 'Matrix element', data: {}, schema_version: 1 },
          { name: 'Renamed', data: {}, schema_version: 1 },
        ]
      : [
          { title: 'Matrix page', seo: {}, template: null },
          { title: 'Renamed', seo: {}, template: null },
        ];
  for (const [index, version] of content.entries())
    await world.t.services.db.query(sql.typeAlias('void')`
      insert into content_versions (tenant_id, site_id, ${sql.identifier([`${kind}_id`])}, number, reason, content, changed)
      values (${world.tenantA.id}, ${world.siteA.id}, ${id}, ${index + 1}, 'save', ${sql.jsonb(version)}, '{}')`);
  return id;
}

/** A published element of site A. */
const publishedElementOfA = async (world: World) => {
  const id = await elementOfA(world);
  await world.t.services.db.query(sql.typeAlias('void')`
    update content_elements set status = 'published', published_at = now() where id = ${id}`);
  return id;
};

/** A published page of site A. */
const publishedPageOfA = async (world: World) => {
  const id = await pageOfA(world);
  await world.t.services.db.query(sql.typeAlias('void')`
    update pages set status = 'published', published_at = now() where id = ${id}`);
  return id;
};

type Builder = (world: World) => Promise<MatrixRequest>;

const translateBody = { target_locale: 'de', mode: 'copy' };

const admin = (world: World) => ({
  kind: 'user' as const,
  userId: world.userIds.global_admin!,
  sessionId: 'setup',
  isGlobalAdmin: true,
});

/** A disabled content webhook subscription of tenant A, fresh for each request. */
const contentWebhookOf = (world: World) =>
  createContentWebhook(world.t.services.db, world.t.services.config, admin(world), world.tenantA.id, {
    url: 'https://hooks.example.com/content',
    events: ['element.published'],
    enabled: false,
  });

const memberOfA = async (world: World, role: 'admin' | 'editor' | 'author' = 'author') => {
  const user = await newUser(world.t);
  await addMember(world.t.services.db, world.tenantA.id, user.id, role);
  return user;
};

const freshAccount = (world: World) =>
  createServiceAccount(world.t.services.db, admin(world), {
    tenant_id: world.tenantA.id,
    name: 'target',
    scopes: ['sites:read'],
  });

/** A fresh prompt type (hex, so a slug) with one stored version. */
async function systemPromptOfWorld(world: World): Promise<string> {
  const type = `matrix-${world.unique()}`;
  await saveSystemPrompt(world.t.services.db, admin(world), type, { content: 'Write plainly.' });
  return type;
}

/** A fresh transfer prompt with one variable. */
const transferPromptOfWorld = (world: World) =>
  world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into transfer_prompts (name, template, variables)
    values (${`Matrix ${world.unique()}`}, 'Hand over {{task}}.', ${sql.jsonb([{ name: 'task', description: '' }])})
    returning id`);
/** An agent serving tenant A (agents are written by another area; here they are rows). */
const agentOfA = async (world: World) => {
  const id = await world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into agents (name) values (${`Matrix agent ${world.unique()}`}) returning id`);
  await world.t.services.db.query(sql.typeAlias('void')`
    insert into agent_tenants (agent_id, tenant_id) values (${id}, ${world.tenantA.id})`);
  return id;
};

/** A text document of site A in a fresh agent's knowledge base. */
const knowledgeOfA = async (world: World) => {
  const agent = await agentOfA(world);
  const document = await world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into knowledge_documents (agent_id, tenant_id, site_id, kind, title, locale, body, body_format)
    values (${agent}, ${world.tenantA.id}, ${world.siteA.id}, 'text', 'Matrix', 'en', 'Matrix text.', 'plain')
    returning id`);
  return { agent, document };
};

/** A run of a fresh agent on site A by its admin, in a shared conversation (every member of A who reaches the site reads it). */
const runOfA = async (world: World, status: JobStatus = 'queued') => {
  const agent = await agentOfA(world);
  const admin = world.userIds.tenant_admin!;
  const conversation = await world.t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into agent_conversations (tenant_id, site_id, agent_id, user_id, actor_id, shared, title)
    values (${world.tenantA.id}, ${world.siteA.id}, ${agent}, ${admin}, ${admin}, true, 'Matrix') returning id`);
  const job = await newJob(world.t, world.siteA, {
    userId: admin,
    status,
    kind: 'agent_run',
    input: {
      agent_id: agent,
      conversation_id: conversation,
      input: 'Hello',
      max_steps: 8,
      max_tokens: 20000,
      actor: { kind: 'user', user_id: admin },
    },
  });
  return { agent, conversation, run: job.id };
};

const fixed =
  (path: string, body?: Record<string, unknown>): Builder =>
  async () => ({ path, ...(body ? { body } : {}) });

export const requests: Record<string, Builder> = {
  'GET /': fixed('/'),
  'GET /health': fixed('/health'),
  'GET /health/live': fixed('/health/live'),
  'GET /health/ready': fixed('/health/ready'),
  'GET /health/cachestore': fixed('/health/cachestore'),

  'POST /auth/login': async (world) => ({
    path: '/auth/login',
    body: { username: (await newUser(world.t)).email, password, grant_type: 'password' },
  }),
  'POST /auth/logout': fixed('/auth/logout'),
  'POST /auth/refresh-token': async () => ({ path: '/auth/refresh-token', bearer: 'refresh' }),
  'GET /auth/currentuser': fixed('/auth/currentuser'),
  'GET /auth/token-info': fixed('/auth/token-info'),
  'POST /auth/token': async (world) => ({
    path: '/auth/token',
    body: {
      grant_type: 'client_credentials',
      client_id: world.serviceAccount.client_id,
      client_secret: world.serviceAccount.client_secret,
    },
  }),
  'POST /auth/signup/': async (world) => ({
    path: '/auth/signup/',
    body: { email: `new-${world.unique()}@example.com`, password, full_name: 'New Person' },
  }),
  'POST /auth/signup/verify-email': fixed('/auth/signup/verify-email', { token: 'not-a-valid-verification-token' }),
  'POST /auth/signup/resend-verification': fixed('/auth/signup/resend-verification', { email: 'someone@example.com' }),
  'POST /auth/password-reset-request': fixed('/auth/password-reset-request', { email: 'someone@example.com' }),
  'POST /auth/password-reset-confirm': fixed('/auth/password-reset-confirm', {
    token: 'not-a-valid-reset-token',
    new_password: 'a long new password',
  }),
  // No provider is configured in this app: every caller gets the same 404.
  'GET /auth/signup/oauth/{provider}': fixed('/auth/signup/oauth/google'),
  'POST /auth/signup/oauth/callback': fixed('/auth/signup/oauth/callback', { code: 'code', state: 'unknown-state' }),

  'GET /users/': fixed('/users/'),
  'POST /users/': async (world) => ({
    path: '/users/',
    body: { email: `made-${world.unique()}@example.com`, password, full_name: 'Made' },
  }),
  'GET /users/{user_id}': async (world) => ({ path: `/users/${(await memberOfA(world)).id}` }),
  'PATCH /users/{user_id}': async (world) => ({
    path: `/users/${(await memberOfA(world)).id}`,
    body: { full_name: 'Renamed' },
  }),
  'DELETE /users/{user_id}': async (world) => ({ path: `/users/${(await memberOfA(world)).id}` }),
  'PATCH /users/{user_id}/global-admin': async (world) => ({
    path: `/users/${(await memberOfA(world)).id}/global-admin`,
    body: { is_global_admin: false },
  }),
  'GET /users/{user_id}/sites': async (world) => ({ path: `/users/${(await memberOfA(world)).id}/sites` }),

  'GET /admin/tenants/': fixed('/admin/tenants/'),
  'POST /admin/tenants/': async (world) => ({ path: '/admin/tenants/', body: { name: `Made ${world.unique()}` } }),
  'GET /admin/tenants/current/info': fixed('/admin/tenants/current/info'),
  'GET /admin/tenants/{tenant_id}': async (world) => ({ path: `/admin/tenants/${world.tenantA.id}` }),
  'PATCH /admin/tenants/{tenant_id}': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}`,
    body: { name: 'Tenant A' },
  }),
  'DELETE /admin/tenants/{tenant_id}': async (world) => ({ path: `/admin/tenants/${(await newTenant(world.t)).id}` }),
  'GET /admin/tenants/{tenant_id}/available-users': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}/available-users`,
  }),
  'POST /admin/tenants/{tenant_id}/clone': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}/clone`,
    body: { name: `Clone ${world.unique()}` },
  }),
  'GET /admin/tenants/{tenant_id}/users': async (world) => ({ path: `/admin/tenants/${world.tenantA.id}/users` }),
  'POST /admin/tenants/{tenant_id}/users/{user_id}': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}/users/${(await newUser(world.t)).id}`,
    body: { role: 'editor' },
  }),
  'PATCH /admin/tenants/{tenant_id}/users/{user_id}': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}/users/${(await memberOfA(world)).id}`,
    body: { role: 'editor' },
  }),
  'DELETE /admin/tenants/{tenant_id}/users/{user_id}': async (world) => ({
    path: `/admin/tenants/${world.tenantA.id}/users/${(await memberOfA(world)).id}`,
  }),

  'GET /sites/': fixed('/sites/'),
  'POST /sites/': async (world) => ({
    path: '/sites/',
    body: { tenant_id: world.tenantA.id, name: 'New site', slug: `new-${world.unique()}` },
  }),
  'GET /sites/by-tenant/{tenant_id}': async (world) => ({ path: `/sites/by-tenant/${world.tenantA.id}` }),
  'GET /sites/{site_identifier}': async (world) => ({ path: `/sites/${world.siteA.slug}` }),
  'PATCH /sites/{site_identifier}': async (world) => ({ path: `/sites/${world.siteA.id}`, body: { name: 'Site A1' } }),
  'DELETE /sites/{site_identifier}': async (world) => ({
    path: `/sites/${(await newSite(world.t, world.tenantA)).id}`,
  }),
  'GET /sites/{site_identifier}/users': async (world) => ({ path: `/sites/${world.siteA.slug}/users` }),
  'GET /sites/{site_identifier}/available-users': async (world) => ({
    path: `/sites/${world.siteA.slug}/available-users`,
  }),
  'POST /sites/{site_identifier}/users/{user_id}': async (world) => ({
    path: `/sites/${world.siteA.id}/users/${(await memberOfA(world)).id}`,
  }),
  'DELETE /sites/{site_identifier}/users/{user_id}': async (world) => {
    const user = await memberOfA(world);
    await assignToSite(world.t, world.siteA, user.id);
    return { path: `/sites/${world.siteA.id}/users/${user.id}` };
  },

  'GET /api/service-accounts/': fixed('/api/service-accounts/'),
  'POST /api/service-accounts/': async (world) => ({
    path: '/api/service-accounts/',
    body: { tenant_id: world.tenantA.id, name: 'New bot', scopes: ['sites:read'] },
  }),
  'GET /api/service-accounts/{service_account_id}': async (world) => ({
    path: `/api/service-accounts/${world.serviceAccount.id}`,
  }),
  'PATCH /api/service-accounts/{service_account_id}': async (world) => ({
    path: `/api/service-accounts/${world.serviceAccount.id}`,
    body: { description: 'still the matrix bot' },
  }),
  'GET /api/tenants/{tenant_id}/webhook-secret': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/webhook-secret`,
  }),
  'POST /api/tenants/{tenant_id}/webhook-secret/rotate': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/webhook-secret/rotate`,
    body: { grace_period_seconds: 0 },
  }),
  'POST /api/tenants/{tenant_id}/api-keys': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/api-keys`,
    body: { name: 'Matrix key', service_account_id: world.serviceAccount.id, scopes: ['sites:read'] },
  }),
  'GET /api/tenants/{tenant_id}/api-keys': async (world) => ({ path: `/api/tenants/${world.tenantA.id}/api-keys` }),
  'DELETE /api/tenants/{tenant_id}/api-keys/{api_key_id}': async (world) => {
    const key = await createApiKey(world.t.services.db, admin(world), world.tenantA.id, {
      name: 'target',
      service_account_id: world.serviceAccount.id,
      scopes: ['sites:read'],
    });
    return { path: `/api/tenants/${world.tenantA.id}/api-keys/${key.id}` };
  },
  'GET /api/tenants/{tenant_id}/content-webhooks': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks`,
  }),
  'POST /api/tenants/{tenant_id}/content-webhooks': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks`,
    // Disabled: the matrix's content writes record no events for it.
    body: { url: 'https://hooks.example.com/content', events: ['page.published'], enabled: false },
  }),
  'GET /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks/${(await contentWebhookOf(world)).id}`,
  }),
  'PATCH /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks/${(await contentWebhookOf(world)).id}`,
    body: { description: 'still the matrix content webhook' },
  }),
  'DELETE /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks/${(await contentWebhookOf(world)).id}`,
  }),
  'GET /api/tenants/{tenant_id}/content-webhooks/{content_webhook_id}/deliveries': async (world) => ({
    path: `/api/tenants/${world.tenantA.id}/content-webhooks/${(await contentWebhookOf(world)).id}/deliveries`,
  }),
  'DELETE /api/service-accounts/{service_account_id}': async (world) => ({
    path: `/api/service-accounts/${(await freshAccount(world)).id}`,
  }),

  'GET /{site_identifier}/transactions/': async (world) => ({ path: `/${world.siteA.slug}/transactions/` }),
  'GET /{site_identifier}/transactions/cost-settings': async (world) => ({
    path: `/${world.siteA.slug}/transactions/cost-settings`,
  }),
  'PUT /{site_identifier}/transactions/cost-settings': async (world) => ({
    path: `/${world.siteA.slug}/transactions/cost-settings`,
    body: { settings: [{ kind: 'speech', price: 2 }] },
  }),
  'POST /{site_identifier}/transactions/credits/add': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/add`,
    body: { user_id: world.userIds.author, amount: 5, reason: 'matrix' },
  }),
  'POST /{site_identifier}/transactions/credits/allocate-from-tenant': async (world) => {
    // The pool must hold enough for whoever is allowed to move credits out of it.
    await allocateToTenant(world.t.services.db, admin(world), {
      tenantId: world.tenantA.id,
      amount: 5,
      reason: 'matrix top-up',
    });
    return {
      path: `/${world.siteA.slug}/transactions/credits/allocate-from-tenant`,
      body: { user_id: world.userIds.author, amount: 5 },
    };
  },
  'GET /{site_identifier}/transactions/credits/available': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/available`,
  }),
  'GET /{site_identifier}/transactions/credits/balance': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/balance`,
  }),
  'GET /{site_identifier}/transactions/credits/balance-with-tenant': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/balance-with-tenant`,
  }),
  'POST /{site_identifier}/transactions/credits/check': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/check`,
    body: { kind: 'speech', units: 30 },
  }),
  'GET /{site_identifier}/transactions/credits/site-users': async (world) => ({
    path: `/${world.siteA.slug}/transactions/credits/site-users`,
  }),
  'GET /{site_identifier}/transactions/monthly-usage': async (world) => ({
    path: `/${world.siteA.slug}/transactions/monthly-usage`,
  }),
  'GET /{site_identifier}/transactions/stats': async (world) => ({ path: `/${world.siteA.slug}/transactions/stats` }),
  'POST /admin/global-cost-settings/tenant-credits/allocate': async (world) => ({
    path: '/admin/global-cost-settings/tenant-credits/allocate',
    body: { tenant_id: world.tenantA.id, amount: 10, reason: 'matrix' },
  }),
  'GET /admin/global-cost-settings/tenant-credits/{tenant_id}': async (world) => ({
    path: `/admin/global-cost-settings/tenant-credits/${world.tenantA.id}`,
  }),

  'GET /admin/global-cost-settings/': fixed('/admin/global-cost-settings/'),
  'POST /admin/global-cost-settings/': async (world) => ({
    path: '/admin/global-cost-settings/',
    body: { kind: priceKind(world), unit: 'item', credits_per_unit: 1 },
  }),
  'PUT /admin/global-cost-settings/bulk': async (world) => ({
    path: '/admin/global-cost-settings/bulk',
    body: { settings: [{ kind: priceKind(world), unit: 'item', credits_per_unit: 2 }] },
  }),
  'GET /admin/global-cost-settings/credit-overview': fixed('/admin/global-cost-settings/credit-overview'),
  'GET /admin/global-cost-settings/public': fixed('/admin/global-cost-settings/public'),
  'GET /admin/global-cost-settings/readonly/current': async (world) => ({
    path: `/admin/global-cost-settings/readonly/current?site_id=${world.siteA.id}`,
  }),
  'GET /admin/global-cost-settings/sites/{site_id}/credits': async (world) => ({
    path: `/admin/global-cost-settings/sites/${world.siteA.id}/credits`,
  }),
  'GET /admin/global-cost-settings/tenant-credits': fixed('/admin/global-cost-settings/tenant-credits'),
  'PATCH /admin/global-cost-settings/tenant-credits/{tenant_id}/monthly-limit': async (world) => ({
    path: `/admin/global-cost-settings/tenant-credits/${world.tenantA.id}/monthly-limit`,
    body: { monthly_limit: null },
  }),
  'POST /admin/global-cost-settings/user-credits/allocate': async (world) => ({
    path: '/admin/global-cost-settings/user-credits/allocate',
    body: { site_id: world.siteA.id, user_id: world.userIds.tenant_admin!, amount: 5, reason: 'matrix' },
  }),
  'GET /admin/global-cost-settings/users/credits': fixed('/admin/global-cost-settings/users/credits'),
  'GET /admin/global-cost-settings/{setting_id}': async (world) => ({
    path: `/admin/global-cost-settings/${await priceOfWorld(world)}`,
  }),
  'PATCH /admin/global-cost-settings/{setting_id}': async (world) => ({
    path: `/admin/global-cost-settings/${await priceOfWorld(world)}`,
    body: { credits_per_unit: 3 },
  }),
  'DELETE /admin/global-cost-settings/{setting_id}': async (world) => ({
    path: `/admin/global-cost-settings/${await priceOfWorld(world)}`,
  }),

  'GET /{site_identifier}/payments/credit-packages': async (world) => ({
    path: `/${world.siteA.slug}/payments/credit-packages`,
  }),
  'POST /{site_identifier}/payments/create-checkout-session': async (world) => ({
    path: `/${world.siteA.slug}/payments/create-checkout-session`,
    body: {
      package_id: await packageOfWorld(world),
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/cancel',
    },
  }),
  'GET /{site_identifier}/payments/transactions': async (world) => ({
    path: `/${world.siteA.slug}/payments/transactions`,
  }),
  // A payment of site A's admin: other members see only their own.
  'GET /{site_identifier}/payments/transactions/{transaction_id}': async (world) => ({
    path: `/${world.siteA.slug}/payments/transactions/${await world.t.services.db.oneFirst(sql.type(
      z.object({ id: z.string() }),
    )`
      insert into payments (tenant_id, site_id, user_id, package_name, credits, amount, currency)
      values (${world.tenantA.id}, ${world.siteA.id}, ${world.userIds.tenant_admin!}, 'matrix', 1, 100, 'usd') returning id`)}`,
  }),
  'POST /payments/webhook': async () => {
    const { payload, header } = signEvent(
      {
        id: `evt_${randomUUID()}`,
        object: 'event',
        type: 'customer.created',
        created: 1,
        data: { object: { id: 'cus_1' } },
      },
      matrixStripeSecret,
    );
    return {
      path: '/payments/webhook',
      raw: payload,
      headers: { 'Content-Type': 'application/json', 'Stripe-Signature': header },
    };
  },
  'GET /admin/credit-packages': fixed('/admin/credit-packages'),
  'POST /admin/credit-packages': fixed('/admin/credit-packages', {
    name: 'Matrix',
    credits: 10,
    price: 100,
    currency: 'usd',
  }),
  'PATCH /admin/credit-packages/{package_id}': async (world) => ({
    path: `/admin/credit-packages/${await packageOfWorld(world)}`,
    body: { name: 'Renamed' },
  }),

  'POST /api/contact': fixed('/api/contact', {
    name: 'Matrix',
    email: 'matrix@example.org',
    subject: 'Hello',
    message: 'A message from the access matrix.',
  }),
  'GET /api/contact/test-smtp': fixed('/api/contact/test-smtp'),
  'GET /admin/fraud/blocked-signups': fixed('/admin/fraud/blocked-signups'),
  'GET /admin/fraud/suspicious-signups': fixed('/admin/fraud/suspicious-signups'),
  'GET /admin/fraud/abuse-patterns': fixed('/admin/fraud/abuse-patterns'),
  'POST /admin/fraud/block-tenant/{tenant_id}': async (world) => ({
    path: `/admin/fraud/block-tenant/${(await newTenant(world.t, `Blockable ${world.unique()}`)).id}`,
    body: { reason: 'matrix' },
  }),
  'GET /search/sites/{site_identifier}': async (world) => ({
    path: `/search/sites/${await publicSiteA(world)}?q=matrix`,
  }),
  'GET /search/sites/{site_identifier}/suggest': async (world) => ({
    path: `/search/sites/${await publicSiteA(world)}/suggest?q=mat`,
  }),
  'GET /search/sites/{site_identifier}/analytics': async (world) => ({
    path: `/search/sites/${world.siteA.slug}/analytics`,
  }),
  'GET /search/sites/{site_identifier}/stats': async (world) => ({ path: `/search/sites/${world.siteA.slug}/stats` }),
  'POST /search/admin/sites/{site_identifier}/reindex': async (world) => ({
    path: `/search/admin/sites/${world.siteA.slug}/reindex`,
  }),
  'DELETE /search/admin/sites/{site_identifier}/index': async (world) => ({
    path: `/search/admin/sites/${world.siteA.slug}/index`,
  }),
  'GET /search/admin/health': fixed('/search/admin/health'),
  'GET /{site_identifier}/site-statistics/overview': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/overview`,
  }),
  'GET /{site_identifier}/site-statistics/monthly': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/monthly`,
  }),
  'GET /{site_identifier}/site-statistics/endpoints': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/endpoints`,
  }),
  'GET /{site_identifier}/site-statistics/sites': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/sites`,
  }),
  'GET /{site_identifier}/site-statistics/diagnostic': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/diagnostic`,
  }),
  'GET /{site_identifier}/site-statistics/health': async (world) => ({
    path: `/${world.siteA.slug}/site-statistics/health`,
  }),
  'GET /admin/monitoring/system-health': fixed('/admin/monitoring/system-health'),
  'GET /admin/monitoring/performance-metrics': fixed('/admin/monitoring/performance-metrics'),
  'GET /admin/monitoring/cache-statistics': fixed('/admin/monitoring/cache-statistics'),
  'POST /admin/monitoring/cache-cleanup': fixed('/admin/monitoring/cache-cleanup'),
  'GET /admin/monitoring/rate-limit-stats': fixed('/admin/monitoring/rate-limit-stats'),
  'GET /admin/monitoring/security-dashboard': fixed('/admin/monitoring/security-dashboard'),
  'GET /admin/monitoring/threat-intelligence': fixed('/admin/monitoring/threat-intelligence'),
  'GET /subscription/current': async (world) => ({ path: `/subscription/current?tenant_id=${world.tenantA.id}` }),
  'GET /subscription/plans': fixed('/subscription/plans'),
  'POST /subscription/upgrade': async (world) => ({
    path: `/subscription/upgrade?tenant_id=${world.tenantA.id}`,
    body: { plan_id: (await planOfWorld(world)).id, ...shop },
  }),
  'GET /subscription/verify-upgrade': async (world) => ({
    path: `/subscription/verify-upgrade?tenant_id=${world.tenantA.id}&session_id=${await paidCheckoutOfA(world)}`,
  }),
  'POST /subscription/cancel': async (world) => {
    await subscribedA(world);
    return { path: `/subscription/cancel?tenant_id=${world.tenantA.id}` };
  },
  'POST /subscription/portal': async (world) => {
    await subscribedA(world);
    return {
      path: `/subscription/portal?tenant_id=${world.tenantA.id}`,
      body: { return_url: 'https://shop.example/account' },
    };
  },
  'POST /subscription/allocate-monthly-credits': async (world) => ({
    path: '/subscription/allocate-monthly-credits',
    body: { tenant_id: world.tenantB.id },
  }),
  'GET /subscription/storage': async (world) => ({ path: `/subscription/storage?tenant_id=${world.tenantA.id}` }),
  'GET /admin/plans': fixed('/admin/plans'),
  'POST /admin/plans': async (world) => ({
    path: '/admin/plans',
    body: {
      name: 'Matrix',
      monthly_credits: 1,
      price: 100,
      currency: 'usd',
      stripe_price_id: `price_m${world.unique()}`,
    },
  }),
  'PATCH /admin/plans/{plan_id}': async (world) => ({
    path: `/admin/plans/${(await planOfWorld(world)).id}`,
    body: { name: 'Renamed' },
  }),

  'GET /{site_identifier}/jobs/': async (world) => ({ path: `/${world.siteA.slug}/jobs/` }),
  'GET /{site_identifier}/jobs/{job_id}': async (world) => ({
    path: `/${world.siteA.slug}/jobs/${(await jobOfA(world)).id}`,
  }),
  'POST /{site_identifier}/jobs/{job_id}/cancel': async (world) => ({
    path: `/${world.siteA.slug}/jobs/${(await jobOfA(world)).id}/cancel`,
  }),
  // A finished job: the stream sends its state once and ends.
  'GET /{site_identifier}/jobs/{job_id}/events': async (world) => ({
    path: `/${world.siteA.slug}/jobs/${(await jobOfA(world, 'succeeded')).id}/events`,
  }),
  'GET /{site_identifier}/jobs/{job_id}/webhooks': async (world) => ({
    path: `/${world.siteA.slug}/jobs/${(await jobOfA(world, 'succeeded')).id}/webhooks`,
  }),
  // The local runtime (no language model here) is free: no credits needed.
  'POST /{site_identifier}/agents/{agent_id}/runs': async (world) => ({
    path: `/${world.siteA.slug}/agents/${await agentOfA(world)}/runs`,
    body: { input: 'Hello' },
  }),
  'GET /{site_identifier}/agents/{agent_id}/runs/{run_id}': async (world) => {
    const { agent, run } = await runOfA(world);
    return { path: `/${world.siteA.slug}/agents/${agent}/runs/${run}` };
  },
  'POST /{site_identifier}/agents/{agent_id}/runs/{run_id}/cancel': async (world) => {
    const { agent, run } = await runOfA(world);
    return { path: `/${world.siteA.slug}/agents/${agent}/runs/${run}/cancel` };
  },
  // A finished run: the stream sends its state once and ends.
  'GET /{site_identifier}/agents/{agent_id}/runs/{run_id}/events': async (world) => {
    const { agent, run } = await runOfA(world, 'succeeded');
    return { path: `/${world.siteA.slug}/agents/${agent}/runs/${run}/events` };
  },
  'GET /{site_identifier}/agents/{agent_id}/conversations': async (world) => ({
    path: `/${world.siteA.slug}/agents/${await agentOfA(world)}/conversations`,
  }),
  'GET /{site_identifier}/agents/{agent_id}/conversations/{conversation_id}/messages': async (world) => {
    const { agent, conversation } = await runOfA(world);
    return { path: `/${world.siteA.slug}/agents/${agent}/conversations/${conversation}/messages` };
  },
  'GET /admin/jobs/': fixed('/admin/jobs/'),
  'GET /admin/jobs/stats': fixed('/admin/jobs/stats'),
  'GET /admin/jobs/per-minute': fixed('/admin/jobs/per-minute?hours=1'),
  'GET /admin/jobs/{job_id}': async (world) => ({ path: `/admin/jobs/${(await jobOfA(world)).id}` }),
  'POST /admin/jobs/{job_id}/retry': async (world) => ({
    path: `/admin/jobs/${(await jobOfA(world, 'failed')).id}/retry`,
  }),
  'POST /admin/jobs/{job_id}/cancel': async (world) => ({ path: `/admin/jobs/${(await jobOfA(world)).id}/cancel` }),
  // Bulk actions as a dry run on tenant A: counted, nothing touched, so no other row's jobs change.
  'POST /admin/jobs/bulk-retry': async (world) => ({
    path: '/admin/jobs/bulk-retry',
    body: { tenant_id: world.tenantA.id, dry_run: true },
  }),
  'POST /admin/jobs/bulk-cancel': async (world) => ({
    path: '/admin/jobs/bulk-cancel',
    body: { tenant_id: world.tenantA.id, dry_run: true },
  }),
  'GET /admin/providers': fixed('/admin/providers'),
  'GET /admin/agent-steps': fixed('/admin/agent-steps'),
  // Queue pauses: a kind no row here queues, and tenants of their own, so no other row's jobs are held.
  'GET /admin/queue/pauses': fixed('/admin/queue/pauses'),
  'PUT /admin/queue/pauses/kinds/{kind}': fixed('/admin/queue/pauses/kinds/search_reindex', { reason: 'matrix' }),
  'DELETE /admin/queue/pauses/kinds/{kind}': async (world) => {
    await world.t.services.db.query(sql.typeAlias('void')`
      insert into queue_pauses (kind) values ('rag_index') on conflict do nothing`);
    return { path: '/admin/queue/pauses/kinds/rag_index' };
  },
  'PUT /admin/queue/pauses/tenants/{tenant_id}': async (world) => ({
    path: `/admin/queue/pauses/tenants/${(await newTenant(world.t)).id}`,
  }),
  'DELETE /admin/queue/pauses/tenants/{tenant_id}': async (world) => {
    const tenant = await newTenant(world.t);
    await world.t.services.db.query(sql.typeAlias('void')`insert into queue_pauses (tenant_id) values (${tenant.id})`);
    return { path: `/admin/queue/pauses/tenants/${tenant.id}` };
  },
  // Kind priorities: 0, the default, so no other row's jobs are reordered.
  'GET /admin/queue/kinds': fixed('/admin/queue/kinds'),
  'PUT /admin/queue/kinds/{kind}': fixed('/admin/queue/kinds/search_reindex', { priority: 0 }),
  // No METRICS_TOKEN in this app: global admins only.
  'GET /metrics': fixed('/metrics'),
  'POST /{site_identifier}/media/{media_id}/edit-with-ai': async (world) => {
    await creditEveryone(world);
    return {
      path: `/${world.siteA.slug}/media/${await mediaOfA(world)}/edit-with-ai`,
      body: { instruction: 'make it black and white' },
    };
  },
  'POST /{site_identifier}/media/{media_id}/generate-metadata': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/media/${await mediaOfA(world)}/generate-metadata`, body: {} };
  },
  'POST /{site_identifier}/media/generate': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/media/generate`, body: { prompt: 'Matrix image', size: '256x256' } };
  },
  'POST /{site_identifier}/media/generatevideo': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/media/generatevideo`, body: { prompt: 'Matrix video.', size: '640x360' } };
  },
  'POST /{site_identifier}/media/generatevideo-varianta': async (world) => {
    await creditEveryone(world);
    return {
      path: `/${world.siteA.slug}/media/generatevideo-varianta`,
      body: { prompt: 'Matrix video.', size: '640x360' },
    };
  },
  'POST /{site_identifier}/media/generatevideo-variantb': async (world) => {
    await creditEveryone(world);
    return {
      path: `/${world.siteA.slug}/media/generatevideo-variantb`,
      body: { prompt: 'Matrix video.', size: '1280x720' },
    };
  },
  'POST /{site_identifier}/media/tts': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/media/tts`, body: { text: 'Matrix speech.' } };
  },
  'GET /{site_identifier}/media/': async (world) => ({ path: `/${world.siteA.slug}/media/` }),
  'POST /{site_identifier}/media/': async (world) => ({ path: `/${world.siteA.slug}/media/`, file: onePixelPng }),
  'GET /{site_identifier}/media/count': async (world) => ({ path: `/${world.siteA.slug}/media/count?kind=image` }),
  'GET /{site_identifier}/media/{media_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}`,
  }),
  'GET /{site_identifier}/media/by-id/{media_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/by-id/${await mediaOfA(world)}`,
  }),
  'PATCH /{site_identifier}/media/{media_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}`,
    body: { alt: 'A matrix' },
  }),
  'POST /{site_identifier}/media/{media_id}/move': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}/move`,
    body: { folder_id: await folderOfA(world) },
  }),
  'GET /{site_identifier}/media/{media_id}/view': async (world) => {
    const id = await mediaOfA(world);
    const key = await world.t.services.db.oneFirst(
      sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${id}`,
    );
    await createStorage(world.t.config).put(key, Buffer.from('matrix'), 'image/png');
    return { path: `/${world.siteA.slug}/media/${id}/view` };
  },
  'GET /{site_identifier}/media/{media_id}/signed-view': async (world) => {
    const id = await mediaOfA(world);
    const key = await world.t.services.db.oneFirst(
      sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${id}`,
    );
    await createStorage(world.t.config).put(key, Buffer.from('matrix'), 'image/png');
    const links = { base: '', secret: signingKey(world.t.config) };
    return { path: signedUrl(links, world.siteA.id, id, Math.floor(Date.now() / 1000) + 3600) };
  },
  'GET /public/{site_identifier}/media/{media_id}': async (world) => ({
    path: `/public/${await publicSiteA(world)}/media/${await mediaOfA(world)}`,
  }),
  'GET /public/{site_identifier}/media/{media_id}/view': async (world) => {
    const id = await mediaOfA(world);
    const key = await world.t.services.db.oneFirst(
      sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${id}`,
    );
    await createStorage(world.t.config).put(key, Buffer.from('matrix'), 'image/png');
    return { path: `/public/${await publicSiteA(world)}/media/${id}/view` };
  },
  'GET /{site_identifier}/media/{media_id}/image-editor-access': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}/image-editor-access`,
  }),
  'GET /{site_identifier}/media/{media_id}/image-versions': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}/image-versions`,
  }),
  'POST /{site_identifier}/media/{media_id}/save-edited-image': async (world) => {
    const id = await mediaOfA(world);
    const key = await world.t.services.db.oneFirst(
      sql.type(z.object({ storage_key: z.string() }))`select storage_key from media_items where id = ${id}`,
    );
    await createStorage(world.t.config).put(key, onePixelPng, 'image/png');
    return {
      path: `/${world.siteA.slug}/media/${id}/save-edited-image`,
      body: { operations: [{ op: 'flip', direction: 'vertical' }] },
    };
  },
  'DELETE /{site_identifier}/media/{media_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/${await mediaOfA(world)}`,
  }),
  'GET /{site_identifier}/media/folders/': async (world) => ({ path: `/${world.siteA.slug}/media/folders/` }),
  'POST /{site_identifier}/media/folders/': async (world) => ({
    path: `/${world.siteA.slug}/media/folders/`,
    body: { name: `made-${world.unique()}` },
  }),
  'GET /{site_identifier}/media/folders/tree': async (world) => ({ path: `/${world.siteA.slug}/media/folders/tree` }),
  'GET /{site_identifier}/media/folders/{folder_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/folders/${await folderOfA(world)}`,
  }),
  'PATCH /{site_identifier}/media/folders/{folder_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/folders/${await folderOfA(world)}`,
    body: { name: `renamed-${world.unique()}` },
  }),
  'POST /{site_identifier}/media/folders/{folder_id}/move': async (world) => ({
    path: `/${world.siteA.slug}/media/folders/${await folderOfA(world)}/move`,
    body: { parent_id: await folderOfA(world) },
  }),
  'DELETE /{site_identifier}/media/folders/{folder_id}': async (world) => ({
    path: `/${world.siteA.slug}/media/folders/${await folderOfA(world)}`,
  }),
  'GET /{site_identifier}/contenttypes/': async (world) => ({ path: `/${world.siteA.slug}/contenttypes/` }),
  'POST /{site_identifier}/contenttypes/': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/`,
    body: { name: 'Made', api_id: `made_${world.unique()}` },
  }),
  'POST /{site_identifier}/contenttypes/validate': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/validate`,
    body: { fields: [{ id: 'title', label: 'Title', type: 'text' }] },
  }),
  'GET /{site_identifier}/contenttypes/{type_id}': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/${await typeOfA(world)}`,
  }),
  'PATCH /{site_identifier}/contenttypes/{type_id}': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/${await typeOfA(world)}`,
    body: { name: 'Renamed' },
  }),
  'DELETE /{site_identifier}/contenttypes/{type_id}': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/${await typeOfA(world)}`,
  }),
  'POST /{site_identifier}/contenttypes/{type_id}/copy': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/${await typeOfA(world)}/copy`,
    body: { api_id: `copy_${world.unique()}` },
  }),
  'GET /{site_identifier}/contenttypes/{type_id}/dependencies': async (world) => ({
    path: `/${world.siteA.slug}/contenttypes/${await typeOfA(world)}/dependencies`,
  }),
  'POST /admin/content-types/distribute': async (world) => ({
    path: '/admin/content-types/distribute',
    body: { type_id: await typeOfA(world), tenant_ids: [world.tenantB.id] },
  }),
  'POST /{site_identifier}/preview-tokens': async (world) => ({
    path: `/${world.siteA.slug}/preview-tokens`,
    body: { name: 'Matrix preview-tokens' },
  }),
  'GET /{site_identifier}/preview-tokens': async (world) => ({ path: `/${world.siteA.slug}/preview-tokens` }),
  'DELETE /{site_identifier}/preview-tokens/{token_id}': async (world) => {
    const made = await createPreviewToken(
      world.t.services.db,
      { actor: admin(world), site: world.siteA, role: 'admin' },
      {
        name: 'preview-tokens target',
        expires_in_seconds: 600,
      },
    );
    return { path: `/${world.siteA.slug}/preview-tokens/${made.id}` };
  },
  'GET /{site_identifier}/elements/': async (world) => ({ path: `/${world.siteA.slug}/elements/` }),
  'POST /{site_identifier}/elements/': async (world) => ({
    path: `/${world.siteA.slug}/elements/`,
    body: { type: await typeOfA(world), name: 'Made' },
  }),
  'GET /{site_identifier}/elements/{element_id}': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await elementOfA(world)}`,
  }),
  'PATCH /{site_identifier}/elements/{element_id}': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await elementOfA(world)}`,
    body: { name: 'Renamed' },
  }),
  'DELETE /{site_identifier}/elements/{element_id}': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await elementOfA(world)}`,
  }),
  'DELETE /{site_identifier}/elements/{element_id}/force': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await elementOfA(world)}/force`,
  }),
  'GET /{site_identifier}/elements/{element_id}/draft-diff': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/draft-diff`,
  }),
  'DELETE /{site_identifier}/elements/{element_id}/draft': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/draft`,
  }),
  'POST /{site_identifier}/elements/{element_id}/publish': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/publish`,
  }),
  'GET /{site_identifier}/elements/{element_id}/versions': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/versions`,
  }),
  'GET /{site_identifier}/elements/{element_id}/versions/compare': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/versions/compare?from=1&to=2`,
  }),
  'GET /{site_identifier}/elements/{element_id}/versions/{number}': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/versions/1`,
  }),
  'POST /{site_identifier}/elements/{element_id}/versions/{number}/restore': async (world) => ({
    path: `/${world.siteA.slug}/elements/${await versionedOfA(world, 'element')}/versions/1/restore`,
  }),
  'GET /{site_identifier}/posts/': async (world) => ({ path: `/${world.siteA.slug}/posts/` }),
  'POST /{site_identifier}/posts/': async (world) => ({
    path: `/${world.siteA.slug}/posts/`,
    body: { title: `Made ${world.unique()}` },
  }),
  'POST /{site_identifier}/posts/from-url': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/posts/from-url`, body: { url: 'https://example.com/article' } };
  },
  'POST /{site_identifier}/posts/from-pdf': async (world) => {
    // A PDF reserves PDF_MAX_PAGES (200) page credits when the form does not ask for fewer.
    await creditEveryone(world);
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/posts/from-pdf`, file: makePdf([[{ text: 'Matrix PDF' }]]) };
  },
  'POST /{site_identifier}/posts/{post_id}/recrawl': async (world) => {
    await creditEveryone(world);
    const id = await postOfA(world);
    await world.t.services.db.query(sql.typeAlias('void')`
      update posts set source = ${sql.jsonb({ url: 'https://example.com/article', kind: 'url', fetched_at: null, etag: null })}
      where id = ${id}`);
    return { path: `/${world.siteA.slug}/posts/${id}/recrawl` };
  },
  'POST /{site_identifier}/posts/{post_id}/transform': async (world) => {
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/posts/${await postOfA(world)}/transform`, body: { operation: 'summarize' } };
  },
  'GET /{site_identifier}/posts/{post_id}': async (world) => ({
    path: `/${world.siteA.slug}/posts/${await postOfA(world)}`,
  }),
  'PATCH /{site_identifier}/posts/{post_id}': async (world) => ({
    path: `/${world.siteA.slug}/posts/${await postOfA(world)}`,
    body: { title: 'Renamed' },
  }),
  'DELETE /{site_identifier}/posts/{post_id}': async (world) => ({
    path: `/${world.siteA.slug}/posts/${await postOfA(world)}`,
  }),
  'POST /{site_identifier}/seo/analyze': async (world) => ({
    path: `/${world.siteA.slug}/seo/analyze`,
    body: { post_id: await postOfA(world), keyword: 'matrix' },
  }),
  'POST /{site_identifier}/seo/generatetext': async (world) => {
    await creditEveryone(world);
    // Applied to the admin's post: a change of it, so authors may not (they may generate without apply).
    return {
      path: `/${world.siteA.slug}/seo/generatetext`,
      body: { kind: 'title', post_id: await postOfA(world), apply: true },
    };
  },
  'POST /{site_identifier}/generate-website/': async (world) => {
    // One website unit is 100 credits.
    await creditEveryone(world);
    return { path: `/${world.siteA.slug}/generate-website/`, body: { business: 'Matrix', pages: ['home'] } };
  },
  'GET /{site_identifier}/pages/': async (world) => ({ path: `/${world.siteA.slug}/pages/` }),
  'POST /{site_identifier}/pages/': async (world) => ({
    path: `/${world.siteA.slug}/pages/`,
    body: { slug: `made-${world.unique()}`, title: 'Made' },
  }),
  'POST /{site_identifier}/pages/batch-move': async (world) => ({
    path: `/${world.siteA.slug}/pages/batch-move`,
    body: { moves: [{ page_id: await pageOfA(world), parent_id: await pageOfA(world) }] },
  }),
  'POST /{site_identifier}/pages/reorder': async (world) => {
    const parent = await pageOfA(world);
    const first = await pageOfA(world, parent);
    const second = await pageOfA(world, parent);
    return { path: `/${world.siteA.slug}/pages/reorder`, body: { parent_id: parent, page_ids: [second, first] } };
  },
  'GET /{site_identifier}/pages/tree': async (world) => ({ path: `/${world.siteA.slug}/pages/tree` }),
  'GET /{site_identifier}/pages/{page_id}': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}`,
  }),
  'PATCH /{site_identifier}/pages/{page_id}': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}`,
    body: { title: 'Renamed' },
  }),
  'DELETE /{site_identifier}/pages/{page_id}': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}`,
  }),
  'PUT /{site_identifier}/pages/{page_id}/move': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}/move`,
    body: { parent_id: await pageOfA(world) },
  }),
  'GET /{site_identifier}/pages/{page_id}/draft-diff': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/draft-diff`,
  }),
  'DELETE /{site_identifier}/pages/{page_id}/draft': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/draft`,
  }),
  'POST /{site_identifier}/pages/{page_id}/publish': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/publish`,
  }),
  'GET /{site_identifier}/pages/{page_id}/versions': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/versions`,
  }),
  'GET /{site_identifier}/pages/{page_id}/versions/compare': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/versions/compare?from=1&to=2`,
  }),
  'GET /{site_identifier}/pages/{page_id}/versions/{number}': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/versions/1`,
  }),
  'POST /{site_identifier}/pages/{page_id}/versions/{number}/restore': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await versionedOfA(world, 'page')}/versions/1/restore`,
  }),
  'POST /{site_identifier}/pages/{page_id}/elements': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}/elements`,
    body: { element_id: await elementOfA(world) },
  }),
  'POST /{site_identifier}/pages/{page_id}/elements/batch-update': async (world) => ({
    path: `/${world.siteA.slug}/pages/${await pageOfA(world)}/elements/batch-update`,
    body: { elements: [{ element_id: await elementOfA(world), area: 'main' }] },
  }),
  'DELETE /{site_identifier}/pages/{page_id}/elements/{element_id}': async (world) => {
    const { pageId, elementId } = await slotOfA(world);
    return { path: `/${world.siteA.slug}/pages/${pageId}/elements/${elementId}` };
  },
  'PATCH /{site_identifier}/pages/{page_id}/elements/{element_id}': async (world) => {
    const { pageId, elementId } = await slotOfA(world);
    return { path: `/${world.siteA.slug}/pages/${pageId}/elements/${elementId}`, body: { area: 'sidebar' } };
  },
  'GET /public/{site_identifier}/locales': async (world) => ({ path: `/public/${await publicSiteA(world)}/locales` }),
  'GET /public/{site_identifier}/content-types': async (world) => ({
    path: `/public/${await publicSiteA(world)}/content-types`,
  }),
  'GET /public/{site_identifier}/elements': async (world) => ({ path: `/public/${await publicSiteA(world)}/elements` }),
  'GET /public/{site_identifier}/elements/{element_id}': async (world) => ({
    path: `/public/${await publicSiteA(world)}/elements/${await publishedElementOfA(world)}`,
  }),
  'GET /public/{site_identifier}/elements/{element_id}/references': async (world) => ({
    path: `/public/${await publicSiteA(world)}/elements/${await publishedElementOfA(world)}/references`,
  }),
  'GET /public/{site_identifier}/pages': async (world) => ({ path: `/public/${await publicSiteA(world)}/pages` }),
  'GET /public/{site_identifier}/pages/{page_id}': async (world) => ({
    path: `/public/${await publicSiteA(world)}/pages/${await publishedPageOfA(world)}`,
  }),
  'GET /public/{site_identifier}/posts': async (world) => ({ path: `/public/${await publicSiteA(world)}/posts` }),
  'GET /public/{site_identifier}/posts/{post}': async (world) => {
    const site = await publicSiteA(world);
    const id = await postOfA(world);
    await world.t.services.db.query(sql.typeAlias('void')`
      update posts set status = 'published', published_at = now() where id = ${id}`);
    return { path: `/public/${site}/posts/${id}` };
  },
  // Translations: copy mode, so no credits are needed (a copy costs nothing).
  'GET /{site_identifier}/translations/elements/{element_id}': async (world) => ({
    path: `/${world.siteA.slug}/translations/elements/${await elementOfA(world)}`,
  }),
  'POST /{site_identifier}/translations/elements/{element_id}/translate': async (world) => ({
    path: `/${world.siteA.slug}/translations/elements/${await elementOfA(world)}/translate`,
    body: translateBody,
  }),
  'POST /{site_identifier}/translations/elements/{element_id}/sync-translations': async (world) => ({
    path: `/${world.siteA.slug}/translations/elements/${await elementOfA(world)}/sync-translations`,
  }),
  'GET /{site_identifier}/translations/media/{media_id}': async (world) => ({
    path: `/${world.siteA.slug}/translations/media/${await mediaOfA(world)}`,
  }),
  'POST /{site_identifier}/translations/media/{media_id}/translate': async (world) => ({
    path: `/${world.siteA.slug}/translations/media/${await mediaOfA(world)}/translate`,
    body: translateBody,
  }),
  'POST /{site_identifier}/translations/media/{media_id}/sync-translations': async (world) => ({
    path: `/${world.siteA.slug}/translations/media/${await mediaOfA(world)}/sync-translations`,
  }),
  'GET /{site_identifier}/translations/pages/{page_id}': async (world) => ({
    path: `/${world.siteA.slug}/translations/pages/${await pageOfA(world)}`,
  }),
  'POST /{site_identifier}/translations/pages/{page_id}/translate': async (world) => ({
    path: `/${world.siteA.slug}/translations/pages/${await pageOfA(world)}/translate`,
    body: translateBody,
  }),
  'POST /{site_identifier}/translations/pages/{page_id}/sync-translations': async (world) => ({
    path: `/${world.siteA.slug}/translations/pages/${await pageOfA(world)}/sync-translations`,
  }),
  'GET /{site_identifier}/translations/posts/{post_id}': async (world) => ({
    path: `/${world.siteA.slug}/translations/posts/${await postOfA(world)}`,
  }),
  'POST /{site_identifier}/translations/posts/{post_id}/translate': async (world) => ({
    path: `/${world.siteA.slug}/translations/posts/${await postOfA(world)}/translate`,
    body: translateBody,
  }),
  'POST /{site_identifier}/translations/posts/{post_id}/sync-translations': async (world) => ({
    path: `/${world.siteA.slug}/translations/posts/${await postOfA(world)}/sync-translations`,
  }),
  'GET /public/{site_identifier}/navigation': async (world) => ({
    path: `/public/${await publicSiteA(world)}/navigation`,
  }),
  'DELETE /admin/cache/all': fixed('/admin/cache/all'),
  'DELETE /admin/cache/site/{site_id}': async (world) => ({ path: `/admin/cache/site/${world.siteA.id}` }),
  'DELETE /admin/cache/element/{element_id}/site/{site_id}': async (world) => ({
    path: `/admin/cache/element/${await elementOfA(world)}/site/${world.siteA.id}`,
  }),
  // Public and signed: Replicate's failure of a job of A that waits for its prediction. The token, whoever's,
  // plays no part.
  'POST /{site_identifier}/media/webhook/mediaprovider': async (world) => {
    const ref = `matrix${world.unique()}`;
    const job = await jobOfA(world, 'waiting', { provider: 'replicate', providerRef: ref });
    const raw = JSON.stringify({ id: ref, status: 'failed', output: null, error: 'matrix' });
    const id = `msg_matrix${world.unique()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      path: `/${world.siteA.slug}/media/webhook/mediaprovider?provider=replicate&job=${job.id}`,
      raw,
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(matrixWebhookSecret, id, timestamp, raw),
      },
    };
  },
  'GET /system-prompts/': fixed('/system-prompts/'),
  'GET /system-prompts/{prompt_type}': async (world) => ({
    path: `/system-prompts/${await systemPromptOfWorld(world)}`,
  }),
  'POST /system-prompts/{prompt_type}': async (world) => ({
    path: `/system-prompts/matrix-${world.unique()}`,
    body: { content: 'Write plainly.' },
  }),
  'DELETE /system-prompts/{prompt_type}': async (world) => ({
    path: `/system-prompts/${await systemPromptOfWorld(world)}`,
  }),
  'GET /transferprompts/': fixed('/transferprompts/'),
  'POST /transferprompts/': async (world) => ({
    path: '/transferprompts/',
    body: { name: `Matrix ${world.unique()}`, template: 'Hand over {{task}}.', variables: [{ name: 'task' }] },
  }),
  'PATCH /transferprompts/{prompt_id}': async (world) => ({
    path: `/transferprompts/${await transferPromptOfWorld(world)}`,
    body: { description: 'Changed' },
  }),
  'DELETE /transferprompts/{prompt_id}': async (world) => ({
    path: `/transferprompts/${await transferPromptOfWorld(world)}`,
  }),
  ...agentRequests,
  'GET /api/agents/{agent_id}/knowledge-base': async (world) => ({
    path: `/api/agents/${(await knowledgeOfA(world)).agent}/knowledge-base`,
  }),
  'POST /api/agents/{agent_id}/knowledge-base/from-post/{post_id}': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/knowledge-base/from-post/${await postOfA(world)}`,
  }),
  'POST /api/agents/{agent_id}/knowledge-base/from-text': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/knowledge-base/from-text`,
    body: { site_identifier: world.siteA.slug, title: 'Matrix', content: 'Matrix text.' },
  }),
  // Without an embedding model these jobs cost nothing: no credits needed. No worker runs, so nothing is fetched.
  'POST /api/agents/{agent_id}/knowledge-base/from-url': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/knowledge-base/from-url`,
    body: { site_identifier: world.siteA.slug, url: 'https://example.com/article' },
  }),
  // The site is in the query: who may is checked before the upload is read.
  'POST /api/agents/{agent_id}/knowledge-base/from-pdf': async (world) => ({
    path: `/api/agents/${await agentOfA(world)}/knowledge-base/from-pdf?site_identifier=${world.siteA.slug}`,
    file: makePdf([[{ text: 'Matrix PDF' }]]),
  }),
  'GET /api/agents/{agent_id}/knowledge-base/{doc_id}': async (world) => {
    const { agent, document } = await knowledgeOfA(world);
    return { path: `/api/agents/${agent}/knowledge-base/${document}` };
  },
  'DELETE /api/agents/{agent_id}/knowledge-base/{doc_id}': async (world) => {
    const { agent, document } = await knowledgeOfA(world);
    return { path: `/api/agents/${agent}/knowledge-base/${document}` };
  },
  // Without an embedding model the job costs nothing: no credits needed.
  'POST /api/agents/knowledge-base/{doc_id}/compute-rag-index': async (world) => ({
    path: `/api/agents/knowledge-base/${(await knowledgeOfA(world)).document}/compute-rag-index`,
  }),
  'POST /api/agents/{agent_id}/knowledge-base/search': async (world) => ({
    path: `/api/agents/${(await knowledgeOfA(world)).agent}/knowledge-base/search`,
    body: { query: 'matrix' },
  }),
};

/** After each request, tenant A must still be whole for the next one. */
export async function tenantAIntact(world: World): Promise<boolean> {
  return world.t.services.db.exists(sql.type(z.object({}))`select 1 from sites where id = ${world.siteA.id}`);
}
