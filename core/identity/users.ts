// Users: the global directory. Global admins administer it; everyone may read
// and edit themselves (name and password only).
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, conflict, notFound, problemType } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { requireGlobalAdmin, requireUser } from './access.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { revokeAllSessions } from './sessions.ts';

export const password = z.string().min(10, 'must be at least 10 characters').max(1024);

export const userSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    full_name: z.string(),
    is_global_admin: z.boolean(),
    email_verified: z.boolean(),
    status: z.enum(['active', 'blocked']),
    created_at: timestamp,
  })
  .meta({ id: 'User' });

export type User = z.infer<typeof userSchema>;

export const userColumns = sql.fragment`users.id, users.email, users.full_name, users.is_global_admin, users.email_verified, users.status, users.created_at`;

export async function findUser(db: CommonQueryMethods, id: string): Promise<User | null> {
  return db.maybeOne(sql.type(userSchema)`select ${userColumns} from users where id = ${id}`);
}

/** Yourself, or anyone for a global admin; anyone else's id is "not found". */
export async function getUser(db: CommonQueryMethods, actor: Actor, id: string): Promise<User> {
  const caller = requireUser(actor);
  if (caller.userId !== id && !caller.isGlobalAdmin) throw notFound('No such user.');
  const found = await findUser(db, id);
  if (!found) throw notFound('No such user.');
  return found;
}

export async function listUsers(
  db: CommonQueryMethods,
  actor: Actor,
  query: PageQuery & { search?: string | undefined },
) {
  requireGlobalAdmin(actor);
  const pattern = query.search ? containing(query.search) : '';
  const filter = query.search
    ? sql.fragment`(users.email ilike ${pattern} or users.full_name ilike ${pattern})`
    : sql.fragment`true`;
  const rows = await db.any(sql.type(userSchema)`
    select ${userColumns} from users where ${filter} and ${after(query, 'users')}
    order by users.created_at, users.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from users where ${filter}`));
}

export type NewUser = { email: string; password: string; full_name: string; email_verified?: boolean | undefined };

/** Inserts a user; a taken e-mail address is a 409. */
export async function insertUser(
  db: CommonQueryMethods,
  input: NewUser & { password_hash?: string | null },
): Promise<User> {
  const hash = input.password_hash !== undefined ? input.password_hash : await hashPassword(input.password);
  try {
    return await db.one(sql.type(userSchema)`
      insert into users (email, password_hash, full_name, email_verified)
      values (${input.email}, ${hash}, ${input.full_name}, ${input.email_verified ?? false})
      returning ${userColumns}`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError)
      throw conflict('A user with this e-mail address exists.');
    throw error;
  }
}

export async function createUser(db: CommonQueryMethods, actor: Actor, input: NewUser): Promise<User> {
  requireGlobalAdmin(actor);
  // Accounts made by an administrator need no e-mail round trip unless asked.
  return insertUser(db, { ...input, email_verified: input.email_verified ?? true });
}

export type UserChanges = {
  email?: string | undefined;
  full_name?: string | undefined;
  password?: string | undefined;
  current_password?: string | undefined;
  status?: 'active' | 'blocked' | undefined;
  email_verified?: boolean | undefined;
};

export async function updateUser(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  changes: UserChanges,
): Promise<User> {
  const caller = requireUser(actor);
  const self = caller.userId === id;
  if (!self && !caller.isGlobalAdmin) throw notFound('No such user.');
  const adminOnly = (['email', 'status', 'email_verified'] as const).filter((field) => changes[field] !== undefined);
  if (!caller.isGlobalAdmin && adminOnly.length > 0)
    throw new Problem(403, `Only global administrators may change ${adminOnly.join(', ')}.`);
  if (self && changes.status === 'blocked') throw conflict('You cannot block yourself.');
  const existing = await db.maybeOne(
    sql.type(z.object({ password_hash: z.string().nullable() }))`select password_hash from users where id = ${id}`,
  );
  if (!existing) throw notFound('No such user.');
  if (changes.password && self) {
    // Changing your own password proves you know the current one (if you have one).
    if (
      existing.password_hash &&
      !(changes.current_password && (await verifyPassword(existing.password_hash, changes.current_password)))
    ) {
      throw new Problem(422, 'The current password is wrong.', {
        errors: [{ path: 'body.current_password', message: 'does not match' }],
      });
    }
  }
  const hash = changes.password ? await hashPassword(changes.password) : null;
  return db.transaction(async (tx) => {
    let updated: User;
    try {
      updated = await tx.one(sql.type(userSchema)`
        update users set
          email = coalesce(${changes.email ?? null}, email),
          full_name = coalesce(${changes.full_name ?? null}, full_name),
          status = coalesce(${changes.status ?? null}, status),
          email_verified = coalesce(${changes.email_verified ?? null}::boolean, email_verified),
          password_hash = coalesce(${hash}, password_hash)
        where id = ${id}
        returning ${userColumns}`);
    } catch (error) {
      if (error instanceof UniqueIntegrityConstraintViolationError)
        throw conflict('A user with this e-mail address exists.');
      throw error;
    }
    // A new password or a block ends the sessions that exist; your own current one survives a password change.
    if (hash || changes.status === 'blocked') {
      await revokeAllSessions(tx, id, hash ? 'password changed' : 'user blocked', self ? caller.sessionId : undefined);
    }
    return updated;
  });
}

export async function deleteUser(db: CommonQueryMethods, actor: Actor, id: string): Promise<void> {
  const caller = requireGlobalAdmin(actor);
  if (caller.userId === id) throw conflict('You cannot delete yourself.');
  const deleted = await db.maybeOneFirst(
    sql.type(z.object({ id: z.string() }))`delete from users where id = ${id} returning id`,
  );
  if (!deleted) throw notFound('No such user.');
}

export async function setGlobalAdmin(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  isGlobalAdmin: boolean,
): Promise<User> {
  requireGlobalAdmin(actor);
  return db.transaction(async (tx) => {
    // Serialise changes of admin status so two demotions cannot both pass the "last admin" check.
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(72617003)`);
    const updated = await tx.maybeOne(sql.type(userSchema)`
      update users set is_global_admin = ${isGlobalAdmin} where id = ${id} returning ${userColumns}`);
    if (!updated) throw notFound('No such user.');
    const admins = await tx.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from users where is_global_admin and status = 'active'`);
    if (admins === 0) throw conflict('This would leave no global administrator.');
    return updated;
  });
}

const credentials = z.object({
  id: z.string(),
  password_hash: z.string().nullable(),
  status: z.enum(['active', 'blocked']),
  email_verified: z.boolean(),
});

// Verified against when the user does not exist, so both failures take as long.
let decoy: Promise<string> | undefined;

export const invalidCredentials = () =>
  new Problem(401, 'The e-mail address or password is wrong.', {
    type: problemType('invalid-credentials'),
    title: 'Invalid credentials',
  });

/** The user for these credentials, or the same 401 whether the address or the password is wrong. */
export async function checkCredentials(db: CommonQueryMethods, email: string, candidate: string): Promise<string> {
  const row = await db.maybeOne(sql.type(credentials)`
    select id, password_hash, status, email_verified from users where lower(email) = lower(${email})`);
  const hash = row?.password_hash ?? (await (decoy ??= hashPassword('decoy password for timing')));
  const matches = await verifyPassword(hash, candidate);
  if (!row || !row.password_hash || !matches) throw invalidCredentials();
  if (row.status === 'blocked') {
    throw new Problem(403, 'This account is blocked.', {
      type: problemType('account-blocked'),
      title: 'Account blocked',
    });
  }
  if (!row.email_verified) {
    throw new Problem(
      403,
      'Verify your e-mail address first; POST /auth/signup/resend-verification sends a new link.',
      {
        type: problemType('email-not-verified'),
        title: 'E-mail not verified',
      },
    );
  }
  return row.id;
}
