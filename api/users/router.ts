// Users: the global directory, administered by global admins. Anyone may read
// and update themselves (name, and password with the current one).
import { z } from 'zod';
import {
  createUser,
  deleteUser,
  getUser,
  listUsers,
  password,
  setGlobalAdmin,
  updateUser,
  userSchema,
} from '../../core/identity/users.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { created, noContent, uuidParams } from '../schemas.ts';
import { emailAddress } from '../../core/email-address.ts';

const params = uuidParams('user_id');

const newUser = z.strictObject({
  email: emailAddress(),
  password,
  full_name: z.string().trim().min(1).max(200),
  email_verified: z.boolean().optional().describe('Default true: the administrator vouches for the address'),
});

const changes = z.strictObject({
  email: emailAddress().optional().describe('Global admins only'),
  full_name: z.string().trim().min(1).max(200).optional(),
  password: password.optional().describe('Changing your own needs current_password; other sessions end'),
  current_password: z.string().max(1024).optional(),
  status: z.enum(['active', 'blocked']).optional().describe('Global admins only; blocking ends the user’s sessions'),
  email_verified: z.boolean().optional().describe('Global admins only'),
});

const emailTaken = problemResponse('A user with this e-mail address exists');

export const routes = [
  defineRoute({
    key: 'GET /users/',
    access: 'global-admin',
    description: 'All users (global admins). `search` matches e-mail or name.',
    request: { query: pageQuery.extend({ search: z.string().max(200).optional() }) },
    responses: { 200: { description: 'A page of users', schema: pageSchema(userSchema) } },
    async handler({ query }, { db, actor }) {
      return { body: await listUsers(db, actor, query) };
    },
  }),

  defineRoute({
    key: 'POST /users/',
    access: 'global-admin',
    description:
      'Creates a user (global admins). Passwords have at least 10 characters. A taken e-mail address is a 409.',
    request: { body: newUser },
    responses: { ...created('The user', userSchema), 409: emailTaken },
    async handler({ body }, { db, actor }) {
      return { status: 201, body: await createUser(db, actor, body) };
    },
  }),

  defineRoute({
    key: 'GET /users/{user_id}',
    access: 'user',
    description: 'A user: yourself, or anyone for a global admin (others are 404).',
    request: { params },
    responses: { 200: { description: 'The user', schema: userSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await getUser(db, actor, params.user_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /users/{user_id}',
    access: 'user',
    description:
      'Updates a user. Yourself: full_name, password (with current_password). Global admins: also email, status, email_verified.',
    request: { params, body: changes },
    responses: {
      200: { description: 'The updated user', schema: userSchema },
      409: problemResponse('The address belongs to another user, or you tried to block yourself'),
    },
    async handler({ params, body }, { db, actor }) {
      return { body: await updateUser(db, actor, params.user_id, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /users/{user_id}',
    access: 'global-admin',
    description: 'Deletes a user and their memberships and sessions (global admins; not yourself).',
    request: { params },
    responses: { ...noContent('Deleted'), 409: problemResponse('You cannot delete yourself') },
    async handler({ params }, { db, actor }) {
      await deleteUser(db, actor, params.user_id);
      return {};
    },
  }),

  defineRoute({
    key: 'PATCH /users/{user_id}/global-admin',
    access: 'global-admin',
    description:
      'Grants or withdraws global admin status (global admins). The last global admin cannot be withdrawn (409).',
    request: { params, body: z.strictObject({ is_global_admin: z.boolean() }) },
    responses: {
      200: { description: 'The updated user', schema: userSchema },
      409: problemResponse('This would leave no global administrator'),
    },
    async handler({ params, body }, { db, actor }) {
      return { body: await setGlobalAdmin(db, actor, params.user_id, body.is_global_admin) };
    },
  }),
];
