// The access matrix's world as the fuzzer found it, put back after each
// operation. Valid requests change what they are sent to, and the edges of
// valid input (./edges.ts) send valid values to every field: a PATCH of the
// matrix's service account with `status: disabled`, or of tenant A with
// `status: suspended`, would leave every later operation refused. So the rows
// of the world's tenants, site, users and service account, and the users'
// memberships and site assignments, are read once and written back when an
// operation changed them.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { accessChangeHeard } from '../helpers/app.ts';
import type { World } from '../access/world.ts';

type Json = Record<string, unknown>;
type Table = { name: string; key: 'id' | 'user_id'; ids: string[] };

/**
 * The world's rows by table: entities are updated back in place (a delete
 * would cascade); the users' links are deleted and inserted back.
 */
const tablesOf = (world: World): Table[] => {
  const users = Object.values(world.userIds);
  return [
    { name: 'tenants', key: 'id', ids: [world.tenantA.id, world.tenantB.id] },
    { name: 'sites', key: 'id', ids: [world.siteA.id] },
    { name: 'users', key: 'id', ids: users },
    { name: 'service_accounts', key: 'id', ids: [world.serviceAccount.id] },
    { name: 'memberships', key: 'user_id', ids: users },
    { name: 'site_users', key: 'user_id', ids: users },
  ];
};

const stateSchema = z.object({ state: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))) });

export type WorldState = { restore(): Promise<void> };

export async function snapshotWorld(world: World): Promise<WorldState> {
  const db = world.t.services.db;
  const tables = tablesOf(world);
  // Every table's rows in one statement, in a stable order, to compare as text.
  const read = () =>
    db.oneFirst(
      sql.type(stateSchema)`select jsonb_build_object(${sql.join(
        tables.map(
          (table) => sql.fragment`${table.name}::text, (
          select coalesce(jsonb_agg(to_jsonb(t) order by to_jsonb(t)::text), '[]') from ${sql.identifier([table.name])} t
          where ${sql.identifier([table.key])} = any(${sql.array(table.ids, 'uuid')}))`,
        ),
        sql.fragment`, `,
      )}) as state`,
    );
  const columns = z.object({ columns: z.array(z.string()) });
  const settable = new Map<string, string[]>();
  for (const table of tables.filter((one) => one.key === 'id')) {
    settable.set(
      table.name,
      await db.oneFirst(sql.type(columns)`
        select array_agg(column_name::text order by ordinal_position) as columns from information_schema.columns
        where table_schema = 'public' and table_name = ${table.name} and is_generated = 'NEVER' and column_name <> 'id'`),
    );
  }
  const snapshot = await read();
  let last = JSON.stringify(snapshot);

  async function writeBack() {
    await db.transaction(async (tx) => {
      for (const table of tables) {
        const name = sql.identifier([table.name]);
        const rows = snapshot[table.name] as Json[];
        if (table.key === 'user_id') {
          await tx.query(
            sql.typeAlias('void')`delete from ${name} where user_id = any(${sql.array(table.ids, 'uuid')})`,
          );
          await tx.query(sql.typeAlias('void')`
            insert into ${name} select * from jsonb_populate_recordset(null::${name}, ${sql.jsonb(rows as never)})`);
          continue;
        }
        const list = sql.join(
          settable.get(table.name)!.map((column) => sql.identifier([column])),
          sql.fragment`, `,
        );
        for (const row of rows) {
          await tx.query(sql.typeAlias('void')`
            update ${name} set (${list}) = (select ${list} from jsonb_populate_record(null::${name}, ${sql.jsonb(row as never)}))
            where id = ${row.id as string}`);
        }
      }
    });
    await accessChangeHeard(world.t);
  }

  return {
    async restore() {
      if (JSON.stringify(await read()) === last) return;
      await writeBack();
      // updated_at moved: what the world looks like now is the state to compare with.
      last = JSON.stringify(await read());
    },
  };
}
