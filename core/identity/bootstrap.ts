// The first global admin, so a fresh installation can be administered at all.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { hashPassword } from './password.ts';

export type AdminSeed = { email: string; password: string };

/** Creates the admin only when no user exists; returns its id, or null when nothing was created. */
export async function bootstrapAdmin(db: CommonQueryMethods, seed: AdminSeed): Promise<string | null> {
  if (await db.exists(sql.type(z.object({}))`select 1 from users`)) return null;
  const passwordHash = await hashPassword(seed.password);
  // Two processes starting together both see no user; the advisory lock lets one win.
  return db.transaction(async (tx) => {
    await tx.query(sql.unsafe`select pg_advisory_xact_lock(72617002)`);
    return tx.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      insert into users (email, password_hash, full_name, is_global_admin, email_verified)
      select ${seed.email}, ${passwordHash}, 'Administrator', true, true
      where not exists (select 1 from users)
      returning id`);
  });
}
