// User–site associations: which members of a tenant work on which site.
// Managed by the tenant's admins.
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { user } from '../../core/identity/users.ts';
import { site } from '../../core/tenancy/sites.ts';
import {
  assignUserToSite,
  availableUsersForSite,
  listSiteUsers,
  listUserSites,
  removeUserFromSite,
  siteAssignment,
  siteUser,
} from '../../core/tenancy/site-users.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, siteParams, uuidParams } from '../schemas.ts';

const assignmentParams = siteParams.extend(uuidParams('user_id').shape);

export const routes = [
  defineRoute({
    key: 'GET /sites/{site_identifier}/users',
    description:
      'Users assigned to the site, with their tenant role. (Tenant admins reach every site without an assignment.)',
    request: { params: siteParams, query: pageQuery },
    responses: { 200: { description: 'A page of users', schema: pageSchema(siteUser) } },
    async handler({ params, query }, { db, actor }) {
      return {
        body: await db.connect((connection) => listSiteUsers(connection, actor, params.site_identifier, query)),
      };
    },
  }),

  defineRoute({
    key: 'GET /sites/{site_identifier}/available-users',
    description: 'Members of the site’s tenant who are not assigned to it yet.',
    request: { params: siteParams, query: pageQuery },
    responses: { 200: { description: 'A page of users', schema: pageSchema(user) } },
    async handler({ params, query }, { db, actor }) {
      return {
        body: await db.connect((connection) => availableUsersForSite(connection, actor, params.site_identifier, query)),
      };
    },
  }),

  defineRoute({
    key: 'POST /sites/{site_identifier}/users/{user_id}',
    description:
      'Gives a member of the site’s tenant access to the site. Someone outside the tenant is a 404; already assigned, 409.',
    request: { params: assignmentParams },
    responses: created('The assignment', siteAssignment),
    async handler({ params }, { db, actor }) {
      return {
        status: 201,
        body: await db.connect((connection) =>
          assignUserToSite(connection, actor, params.site_identifier, params.user_id),
        ),
      };
    },
  }),

  defineRoute({
    key: 'DELETE /sites/{site_identifier}/users/{user_id}',
    request: { params: assignmentParams },
    responses: noContent('Removed'),
    async handler({ params }, { db, actor }) {
      await db.connect((connection) => removeUserFromSite(connection, actor, params.site_identifier, params.user_id));
      return {};
    },
  }),

  defineRoute({
    key: 'GET /users/{user_id}/sites',
    description:
      'The sites a user can reach: yours, anyone’s for a global admin, or a member’s within the tenants you administer.',
    request: { params: uuidParams('user_id'), query: pageQuery },
    responses: { 200: { description: 'A page of sites', schema: pageSchema(site) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await db.connect((connection) => listUserSites(connection, actor, params.user_id, query)) };
    },
  }),
];
