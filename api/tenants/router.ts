// Tenant management (/admin/tenants): global admins only, except
// /admin/tenants/current/info, which tells any signed-in user their tenants.
import { z } from 'zod';
import { roles } from '../../core/identity/access.ts';
import { currentUserSchema, describeCurrentUser } from '../../core/identity/current-user.ts';
import { userSchema } from '../../core/identity/users.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import {
  assignUserToTenant,
  availableUsersForTenant,
  listTenantUsers,
  membershipSchema,
  removeUserFromTenant,
  tenantUserSchema,
  updateTenantRole,
} from '../../core/tenancy/memberships.ts';
import { cloneTenantWithContent, tenantCloneSchema } from '../../core/cloning/tenant-clone.ts';
import {
  createTenant,
  deleteTenant,
  getTenant,
  listTenants,
  slug,
  tenantSchema,
  updateTenant,
} from '../../core/tenancy/tenants.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, uuidParams } from '../schemas.ts';

const params = uuidParams('tenant_id');
const memberParams = uuidParams('tenant_id', 'user_id');
const settings = z.record(z.string(), z.unknown());
const testMode = z
  .boolean()
  .describe(
    'Test mode: every job of the tenant runs on the local stand-ins at no charge, marked as a test job. ' +
      'Jobs already queued keep the mode they were submitted in.',
  );

const newTenant = z.strictObject({
  name: z.string().trim().min(1).max(200),
  slug: slug.optional().describe('Derived from the name when omitted'),
  monthly_credit_limit: z.number().int().min(0).nullable().optional(),
  test_mode: testMode.optional(),
  settings: settings.optional(),
});

const tenantChanges = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  slug: slug.optional(),
  status: z.enum(['active', 'suspended', 'blocked']).optional(),
  monthly_credit_limit: z.number().int().min(0).nullable().optional(),
  test_mode: testMode.optional(),
  settings: settings.optional(),
});

const roleBody = z.strictObject({ role: z.enum(roles) });

const slugTaken = problemResponse('The slug is taken');

export const routes = [
  defineRoute({
    key: 'GET /admin/tenants/',
    access: 'global-admin',
    request: { query: pageQuery },
    responses: { 200: { description: 'A page of tenants', schema: pageSchema(tenantSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listTenants(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /admin/tenants/',
    access: 'global-admin',
    request: { body: newTenant },
    responses: { ...created('The tenant', tenantSchema), 409: slugTaken },
    async handler({ body }, { db, actor }) {
      return { status: 201, body: await createTenant(db, actor, body) };
    },
  }),

  defineRoute({
    key: 'GET /admin/tenants/current/info',
    access: 'user',
    description:
      'For any signed-in user: who they are, the tenants they belong to with their role, and the sites they can reach.',
    responses: { 200: { description: 'The caller’s tenant context', schema: currentUserSchema } },
    async handler(_input, { db, actor }) {
      return { body: await describeCurrentUser(db, actor) };
    },
  }),

  defineRoute({
    key: 'GET /admin/tenants/{tenant_id}',
    access: 'global-admin',
    request: { params },
    responses: { 200: { description: 'The tenant', schema: tenantSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await getTenant(db, actor, params.tenant_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /admin/tenants/{tenant_id}',
    access: 'global-admin',
    description:
      'Changes the fields sent. `suspended` or `blocked`: its members and service accounts reach nothing from the next request ' +
      'on. `blocked` also does what POST /admin/fraud/block-tenant/{tenant_id} does, in the same transaction: its service ' +
      'accounts are disabled and its queued, waiting and running jobs canceled with their credits released (the reason ' +
      'recorded says it came from here). `active` lifts either; disabled service accounts stay disabled.',
    request: { params, body: tenantChanges },
    responses: { 200: { description: 'The updated tenant', schema: tenantSchema }, 409: slugTaken },
    async handler({ params, body }, { db, actor }) {
      return { body: await updateTenant(db, actor, params.tenant_id, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/tenants/{tenant_id}',
    access: 'global-admin',
    description:
      'Deletes the tenant with its memberships and service accounts. Refused (409) while it still has sites: delete those first.',
    request: { params },
    responses: { ...noContent('Deleted'), 409: problemResponse('The tenant still has sites') },
    async handler({ params }, { db, actor }) {
      await deleteTenant(db, actor, params.tenant_id);
      return {};
    },
  }),

  defineRoute({
    key: 'GET /admin/tenants/{tenant_id}/available-users',
    access: 'global-admin',
    description: 'Users who are not members of the tenant yet.',
    request: { params, query: pageQuery },
    responses: { 200: { description: 'A page of users', schema: pageSchema(userSchema) } },
    async handler({ params, query }, { db, actor }) {
      return {
        body: await availableUsersForTenant(db, actor, params.tenant_id, query),
      };
    },
  }),

  defineRoute({
    key: 'POST /admin/tenants/{tenant_id}/clone',
    access: 'global-admin',
    description:
      'A new tenant copied from this one: settings, sites (slugs prefixed with the new tenant’s slug, the same visibility), ' +
      'memberships and site assignments, made at once. Users are shared, not copied; service accounts are not copied. ' +
      'The sites’ content follows as a `tenant_clone` job (`copy_job_id`, read at `copy_job_url` or /admin/jobs/{job_id}, ' +
      'its progress per stage, no credits): content types, media folders and items (their stored files shared by reference: ' +
      'deleting either side’s item leaves the other’s file), elements with translations, pages with their tree and slots, ' +
      'posts with translations and versions, every reference between them pointing inside the copy. Element and page ' +
      'history is not copied.',
    request: { params, body: newTenant.pick({ name: true, slug: true }) },
    responses: { ...created('The new tenant, with the job copying its content', tenantCloneSchema), 409: slugTaken },
    async handler({ params, body }, { db, actor, services }) {
      return {
        status: 201,
        body: await cloneTenantWithContent(db, services.config, actor, params.tenant_id, body),
      };
    },
  }),

  defineRoute({
    key: 'GET /admin/tenants/{tenant_id}/users',
    access: 'global-admin',
    request: { params, query: pageQuery },
    responses: { 200: { description: 'A page of members with their role', schema: pageSchema(tenantUserSchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listTenantUsers(db, actor, params.tenant_id, query) };
    },
  }),

  defineRoute({
    key: 'POST /admin/tenants/{tenant_id}/users/{user_id}',
    access: 'global-admin',
    description: 'Adds the user to the tenant with a role (default author). Already a member: 409.',
    request: {
      params: memberParams,
      body: z.strictObject({ role: z.enum(roles).default('author') }).default({ role: 'author' }),
    },
    responses: { ...created('The membership', membershipSchema), 409: problemResponse('The user is already a member') },
    async handler({ params, body }, { db, actor }) {
      return {
        status: 201,
        body: await assignUserToTenant(db, actor, params.tenant_id, params.user_id, body.role),
      };
    },
  }),

  defineRoute({
    key: 'PATCH /admin/tenants/{tenant_id}/users/{user_id}',
    access: 'global-admin',
    request: { params: memberParams, body: roleBody },
    responses: { 200: { description: 'The membership', schema: membershipSchema } },
    async handler({ params, body }, { db, actor }) {
      return {
        body: await updateTenantRole(db, actor, params.tenant_id, params.user_id, body.role),
      };
    },
  }),

  defineRoute({
    key: 'DELETE /admin/tenants/{tenant_id}/users/{user_id}',
    access: 'global-admin',
    description: 'Removes the user from the tenant and from its sites.',
    request: { params: memberParams },
    responses: noContent('Removed'),
    async handler({ params }, { db, actor }) {
      await removeUserFromTenant(db, actor, params.tenant_id, params.user_id);
      return {};
    },
  }),
];
