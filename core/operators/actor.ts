// Who the admin command line (scripts/admin.ts) acts as. Whoever can run it
// holds the database's credentials already, so it needs no sign-in; but the
// core functions it calls are the API's, which check for a global admin and
// record who acted (a pause's paused_by, a ledger entry's actor_id). So it acts
// as a real global admin: the one named, or else the longest-standing active one.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { UserActor } from '../actor.ts';
import { Problem } from '../errors.ts';

const adminRow = z.object({ id: z.uuid(), is_global_admin: z.boolean(), status: z.string() });

export async function operatorActor(db: CommonQueryMethods, email?: string): Promise<UserActor> {
  const row = email
    ? await db.maybeOne(sql.type(adminRow)`
        select id, is_global_admin, status from users where lower(email) = lower(${email})`)
    : await db.maybeOne(sql.type(adminRow)`
        select id, is_global_admin, status from users where is_global_admin and status = 'active'
        order by created_at, id limit 1`);
  if (!row) {
    throw new Problem(
      404,
      email
        ? `No user has the address ${email}.`
        : 'There is no active global administrator to act as: create one with `create-admin`.',
    );
  }
  if (!row.is_global_admin || row.status !== 'active')
    throw new Problem(403, `${email} is not an active global administrator.`);
  // A session id of its own, matching no session: nothing the command does ends a real one as "yours".
  return { kind: 'user', userId: row.id, sessionId: randomUUID(), isGlobalAdmin: true };
}

/** A user's id from their id or e-mail address, as an operator types it. */
export async function userIdFor(db: CommonQueryMethods, idOrEmail: string): Promise<string> {
  const id = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from users where ${
      z.uuid().safeParse(idOrEmail).success
        ? sql.fragment`id = ${idOrEmail}`
        : sql.fragment`lower(email) = lower(${idOrEmail})`
    }`);
  if (!id) throw new Problem(404, `No such user: ${idOrEmail}.`);
  return id;
}

/** A tenant's id from its id or slug. */
export async function tenantIdFor(db: CommonQueryMethods, idOrSlug: string): Promise<string> {
  const id = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from tenants where ${
      z.uuid().safeParse(idOrSlug).success
        ? sql.fragment`id = ${idOrSlug}`
        : sql.fragment`slug = ${idOrSlug.toLowerCase()}`
    }`);
  if (!id) throw new Problem(404, `No such tenant: ${idOrSlug}.`);
  return id;
}

/** Whether any user exists: on an empty installation the first admin is made as `npm start` makes it. */
export const anyUser = (db: CommonQueryMethods) => db.exists(sql.type(z.object({}))`select 1 from users`);
