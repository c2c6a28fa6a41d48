// User–site associations: which members of a tenant work on which site.
// Managed by the tenant's admins.
import { userSchema } from '../../core/identity/users.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import {
  assignUserToSite,
  availableUsersForSite,
  listSiteUsers,
  listUserSites,
  removeUserFromSite,
  siteAssignmentSchema,
  siteUserSchema,
} from '../../core/tenancy/site-users.ts';
import { siteSchema } from '../../core/tenancy/sites.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, siteParams, uuidParams } from '../schemas.ts';

const assignmentParams = siteParams.extend(uuidParams('user_id').shape);

export const routes = [
  defineRoute({
    key: 'GET /sites/{site_identifier}/users',
    access: { site: 'admin' },
    description:
      'Users assigned to the site, with their tenant role. (Tenant admins reach every site without an assignment.)',
    request: { params: siteParams, query: pageQuery },
    responses: { 200: { description: 'A page of users', schema: pageSchema(siteUserSchema) } },
    async handler({ query }, { db, site }) {
      return { body: await listSiteUsers(db, site, query) };
    },
  }),

  defineRoute({
    key: 'GET /sites/{site_identifier}/available-users',
    access: { site: 'admin' },
    description: 'Members of the site’s tenant who are not assigned to it yet.',
    request: { params: siteParams, query: pageQuery },
    responses: { 200: { description: 'A page of users', schema: pageSchema(userSchema) } },
    async handler({ query }, { db, site }) {
      return { body: await availableUsersForSite(db, site, query) };
    },
  }),

  defineRoute({
    key: 'POST /sites/{site_identifier}/users/{user_id}',
    access: { site: 'admin' },
    description:
      'Gives a member of the site’s tenant access to the site. Someone outside the tenant is a 404; already assigned, 409.',
    request: { params: assignmentParams },
    responses: { ...created('The assignment', siteAssignmentSchema), 409: problemResponse('Already assigned') },
    async handler({ params }, { db, site }) {
      return { status: 201, body: await assignUserToSite(db, site, params.user_id) };
    },
  }),

  defineRoute({
    key: 'DELETE /sites/{site_identifier}/users/{user_id}',
    access: { site: 'admin' },
    request: { params: assignmentParams },
    responses: noContent('Removed'),
    async handler({ params }, { db, site }) {
      await removeUserFromSite(db, site, params.user_id);
      return {};
    },
  }),

  defineRoute({
    key: 'GET /users/{user_id}/sites',
    access: 'user',
    description:
      'The sites a user can reach: yours, anyone’s for a global admin, or a member’s within the tenants you administer.',
    request: { params: uuidParams('user_id'), query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(siteSchema) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await listUserSites(db, actor, params.user_id, query) };
    },
  }),
];
