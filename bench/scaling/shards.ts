// What a query that names its tenant saves over one that does not, once the
// tables are split by tenant. Citus is not installable here (no Debian
// package, no registry but npm's), so this simulates it on one PostgreSQL:
// a table hash-partitioned on tenant_id into 32 partitions (Citus's default
// shard count) beside the same rows in one table, as today. A query with
// `tenant_id = $1` is pruned to one partition (Citus: a router query, one
// shard on one node); one with only `site_id = $1` or `id = $1` reads every
// partition (Citus: a multi-shard query, a task per shard). Every partition
// has the same indexes, so the fan-out is as cheap as it can be: on Citus
// each task would also be a round trip to a worker node, so the gap there is
// wider than here, never narrower.
import pg from 'pg';
import { closedLoop, describeLatencies, type Latencies } from '../closed-loop.ts';
import { median } from '../compare.ts';
import { withOwnDatabase } from '../own-database.ts';
import type { Server } from './pipeline.ts';

type Row = [string, string];

const shards = 32;
const tenants = 1000;
const rowsPerSite = 200;

const setup = `
create table flat (tenant_id uuid not null, site_id uuid not null, id uuid not null, created_at timestamptz not null,
                   data jsonb not null, primary key (id));
create index on flat (site_id, created_at desc);
create table sharded (like flat) partition by hash (tenant_id);
${Array.from(
  { length: shards },
  (_, i) => `create table sharded_${i} partition of sharded for values with (modulus ${shards}, remainder ${i});`,
).join('\n')}
alter table sharded add primary key (tenant_id, id);
create index on sharded (tenant_id, site_id, created_at desc);
create index on sharded (site_id, created_at desc);
create index on sharded (id);
create table owners as select gen_random_uuid() as tenant_id, gen_random_uuid() as site_id from generate_series(1, ${tenants});
insert into flat
  select o.tenant_id, o.site_id, gen_random_uuid(), now() - i * interval '1 minute',
         jsonb_build_object('title', 'Item ' || i, 'body', repeat('x', 150))
  from owners o, generate_series(1, ${rowsPerSite}) i;
insert into sharded select * from flat;`;

type Query = { name: string; text: string; args: (pick: { tenant: string; site: string; id: string }) => string[] };

const queries: Query[] = [
  {
    name: 'A site’s 50 newest, one table (today)',
    text: 'select id, data from flat where site_id = $1 order by created_at desc limit 50',
    args: (p) => [p.site],
  },
  {
    name: 'The same, 32 partitions, with tenant_id (router)',
    text: 'select id, data from sharded where tenant_id = $1 and site_id = $2 order by created_at desc limit 50',
    args: (p) => [p.tenant, p.site],
  },
  {
    name: 'The same, 32 partitions, site_id only (fan-out)',
    text: 'select id, data from sharded where site_id = $1 order by created_at desc limit 50',
    args: (p) => [p.site],
  },
  { name: 'One row by id, one table (today)', text: 'select data from flat where id = $1', args: (p) => [p.id] },
  {
    name: 'One row by id, 32 partitions, with tenant_id (router)',
    text: 'select data from sharded where tenant_id = $1 and id = $2',
    args: (p) => [p.tenant, p.id],
  },
  {
    name: 'One row by id, 32 partitions, id only (fan-out)',
    text: 'select data from sharded where id = $1',
    args: (p) => [p.id],
  },
];

export async function shardFigures(server: Server): Promise<Row[]> {
  return withOwnDatabase(server.adminUrl, 'bench_shards', 4, async (databaseUrl) => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    // The database is dropped with its connections at the end: an idle one's error is expected then.
    pool.on('error', () => {});
    try {
      await pool.query(setup);
      await pool.query('vacuum analyze flat, sharded');
      const { rows: picks } = await pool.query<{ tenant: string; site: string; id: string }>(
        `select distinct on (site_id) tenant_id as tenant, site_id as site, id from flat order by site_id, created_at`,
      );
      const pick = () => picks[Math.floor(Math.random() * picks.length)]!;
      const measure = (query: Query) =>
        closedLoop(
          async () => {
            await pool.query(query.text, query.args(pick()));
            return true;
          },
          3,
          4,
        );
      // A warm-up round, then three rounds over every query in turn, so drift falls on each alike.
      for (const query of queries) await measure(query);
      const results = new Map<Query, Latencies[]>(queries.map((query) => [query, []]));
      for (let round = 0; round < 3; round++)
        for (const query of queries) results.get(query)!.push(await measure(query));
      const typical = (query: Query) => {
        const loads = results.get(query)!;
        const perSecond = median(loads.map((l) => l.perSecond));
        return loads.find((l) => l.perSecond === perSecond)!;
      };
      const rows: Row[] = [
        [
          'Shards: set-up',
          `${tenants} tenants × 1 site × ${rowsPerSite} rows (${((tenants * rowsPerSite) / 1000).toFixed(0)}k rows, ~250 B each), ` +
            `one table beside ${shards} hash partitions on tenant_id; 4 clients, 3 rounds of 3 s, medians`,
        ],
      ];
      for (const [index, query] of queries.entries()) {
        const base = index % 3 === 0 ? query : queries[index - (index % 3)]!;
        const ratio =
          query === base ? '' : `; ×${(typical(query).perSecond / typical(base).perSecond).toFixed(2)} today`;
        rows.push([query.name, `${describeLatencies(typical(query))}${ratio}`]);
      }
      return rows;
    } finally {
      await pool.end();
    }
  });
}
