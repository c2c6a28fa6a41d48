// Idempotency-Key (on POSTs that create jobs or move credits): the first
// successful answer for a caller, route and key is stored and replayed for a
// repeat with the same request; the same key with another request is a 422,
// and a repeat while the first is still running is a 409. A failed first
// attempt stores nothing, so the client may retry with the same key.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../db/pool.ts';
import { Problem, problemType } from './errors.ts';

export type StoredReply = { status: number; body: unknown; headers?: Record<string, string> };

const keyRule = 'Idempotency-Key must be 1–255 visible ASCII characters';
export const idempotencyKey = z
  .string()
  .min(1, keyRule)
  .max(255, keyRule)
  .regex(/^[\x21-\x7e]{1,255}$/, keyRule);

const stored = z.object({ request_hash: z.instanceof(Buffer), status: z.number().nullable(), response: z.unknown() });

export function requestHash(request: unknown): Buffer {
  return createHash('sha256').update(JSON.stringify(request)).digest();
}

export async function idempotent(
  db: CommonQueryMethods,
  scope: { actorId: string; route: string; key: string; hash: Buffer },
  run: () => Promise<StoredReply>,
): Promise<StoredReply & { replayed: boolean }> {
  const claimed = await db.maybeOneFirst(sql.type(z.object({ claimed: z.boolean() }))`
    insert into idempotency_keys (actor_id, route, key, request_hash)
    values (${scope.actorId}, ${scope.route}, ${scope.key}, ${sql.binary(scope.hash)})
    on conflict do nothing returning true as claimed`);
  if (!claimed) {
    const previous = await db.maybeOne(sql.type(stored)`
      select request_hash, status, response from idempotency_keys
      where actor_id = ${scope.actorId} and route = ${scope.route} and key = ${scope.key}`);
    if (!previous) return idempotent(db, scope, run); // the first attempt failed and let go of the key just now
    if (!previous.request_hash.equals(scope.hash)) {
      throw new Problem(422, 'This Idempotency-Key was used with a different request.', {
        type: problemType('idempotency-key-reused'),
        title: 'Idempotency key reused',
      });
    }
    if (previous.status === null) {
      throw new Problem(409, 'A request with this Idempotency-Key is still being processed; retry shortly.', {
        headers: { 'Retry-After': '1' },
      });
    }
    const reply = previous.response as StoredReply;
    return { ...reply, status: previous.status, replayed: true };
  }
  try {
    const reply = await run();
    await db.query(sql.typeAlias('void')`
      update idempotency_keys set status = ${reply.status}, response = ${sql.jsonb(reply as never)}
      where actor_id = ${scope.actorId} and route = ${scope.route} and key = ${scope.key}`);
    return { ...reply, replayed: false };
  } catch (error) {
    await db.query(sql.typeAlias('void')`
      delete from idempotency_keys where actor_id = ${scope.actorId} and route = ${scope.route} and key = ${scope.key}`);
    throw error;
  }
}
