// The schema against the Citus plan of docs/scaling.md, read from the
// catalog of a freshly migrated database (so it follows the migrations):
// every table in one of three places, and what Citus would refuse or change
// as the schema stands — distributed tables without tenant_id, keys without
// it, foreign keys Citus cannot keep, and triggers on distributed tables
// that notify listeners or write other tables (they would run on the worker
// node that holds the shard).
import pg from 'pg';
import { withOwnDatabase } from '../own-database.ts';
import type { Server } from './pipeline.ts';

type Row = [string, string];

/** Tenant data, split by tenant_id; every one in the same co-location group. */
export const distributed = [
  'jobs',
  'job_attempts',
  'job_webhooks',
  'job_webhook_attempts',
  'credit_accounts',
  'credit_entries',
  'credit_lots',
  'payments',
  'subscriptions',
  'webhook_secrets',
  'media_items',
  'media_folders',
  'media_versions',
  'media_translations',
  'content_types',
  'content_elements',
  'content_element_links',
  'content_element_media',
  'public_elements',
  'pages',
  'page_elements',
  'posts',
  'post_versions',
  'translation_states',
  'search_documents',
  'search_terms',
  'search_queries',
  'search_reindexes',
  'knowledge_documents',
  'knowledge_chunks',
  'knowledge_signatures',
  'knowledge_terms',
  'knowledge_locales',
  'knowledge_folds',
  'request_stats',
  'view_stats',
];

/** Small, read everywhere, joined with tenant data, written rarely: a copy on every node. */
export const reference = [
  'tenants',
  'sites',
  'users',
  'memberships',
  'site_users',
  'service_accounts',
  'plans',
  'credit_packages',
  'cost_settings',
  'agents',
  'agent_tenants',
  'system_prompts',
  'system_prompt_versions',
  'transfer_prompts',
];

/** Identity, security and the process's own bookkeeping: on the coordinator only. */
export const local = [
  'schema_migrations',
  'sessions',
  'refresh_tokens',
  'email_tokens',
  'user_identities',
  'oauth_states',
  'email_outbox',
  'rate_limits',
  'security_counts',
  'signup_screenings',
  'idempotency_keys',
  'webhook_events',
  'contact_messages',
  'stats_flushes',
  'worker_heartbeats',
  'worker_processes',
  'knowledge_count_changes',
];

const placeOf = (table: string) =>
  distributed.includes(table)
    ? 'distributed'
    : reference.includes(table)
      ? 'reference'
      : local.includes(table)
        ? 'local'
        : 'unplaced';

/** Whether Citus keeps a foreign key from a table in one place to one in another. */
function foreignKeyProblem(from: string, to: string, columns: string[], referenced: string[]): string | null {
  const [a, b] = [placeOf(from), placeOf(to)];
  if (a === 'distributed' && b === 'distributed')
    return columns.includes('tenant_id') && referenced.includes('tenant_id') ? null : 'not on tenant_id';
  if (b === 'distributed') return `${a} → distributed`;
  if (a === 'reference' && b === 'local') return 'reference → local';
  return null;
}

const list = (items: string[]) => (items.length ? items.join('; ') : 'none');

export async function inventoryFigures(server: Server): Promise<Row[]> {
  return withOwnDatabase(server.adminUrl, 'bench_inventory', 4, async (databaseUrl) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows: tables } = await client.query<{ name: string; tenant: boolean }>(`
        select c.relname as name, exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id'
                                          and not a.attisdropped) as tenant
        from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') order by 1`);
      const { rows: keys } = await client.query<{ name: string; definition: string; columns: string[] }>(`
        select conrelid::regclass::text as name, pg_get_constraintdef(oid) as definition,
               array(select attname from pg_attribute where attrelid = conrelid and attnum = any(conkey))::text[] as columns
        from pg_constraint where connamespace = 'public'::regnamespace and contype in ('p', 'u', 'x')`);
      const { rows: foreign } = await client.query<{
        name: string;
        target: string;
        columns: string[];
        referenced: string[];
      }>(`
        select conrelid::regclass::text as name, confrelid::regclass::text as target,
               array(select attname from pg_attribute where attrelid = conrelid and attnum = any(conkey))::text[] as columns,
               array(select attname from pg_attribute where attrelid = confrelid and attnum = any(confkey))::text[] as referenced
        from pg_constraint where connamespace = 'public'::regnamespace and contype = 'f'`);
      const { rows: functions } = await client.query<{ name: string; body: string }>(`
        select proname as name, prosrc as body from pg_proc where pronamespace = 'public'::regnamespace`);
      const { rows: triggers } = await client.query<{ name: string; trigger: string; fn: string }>(`
        select t.tgrelid::regclass::text as name, t.tgname as trigger, p.proname as fn
        from pg_trigger t join pg_proc p on p.oid = t.tgfoid
        where not t.tgisinternal and t.tgrelid::regclass::text not like 'graphile_worker.%'`);
      // What a function does, or any function it calls (by name), does.
      const closure = (does: RegExp) => {
        const found = new Set(functions.filter((f) => does.test(f.body)).map((f) => f.name));
        for (let grew = true; grew;) {
          grew = false;
          for (const f of functions)
            if (!found.has(f.name) && [...found].some((name) => new RegExp(`\\b${name}\\s*\\(`).test(f.body))) {
              found.add(f.name);
              grew = true;
            }
        }
        return found;
      };
      const notifying = closure(/pg_notify/i);
      const writing = closure(/(insert\s+into|update\s+\w+\s+(as\s+\w+\s+)?set|delete\s+from)/i);
      const isDistributed = (name: string) => placeOf(name) === 'distributed';
      const unplaced = tables.filter((t) => placeOf(t.name) === 'unplaced').map((t) => t.name);
      const withoutTenant = tables.filter((t) => isDistributed(t.name) && !t.tenant).map((t) => t.name);
      const keysWithout = keys
        .filter((k) => isDistributed(k.name) && !k.columns.includes('tenant_id'))
        .map((k) => `${k.name} ${k.definition}`);
      const refused = foreign
        .map((f) => ({ ...f, problem: foreignKeyProblem(f.name, f.target, f.columns, f.referenced) }))
        .filter((f) => f.problem)
        .map((f) => `${f.name}(${f.columns.join(', ')}) → ${f.target} [${f.problem}]`);
      const onDistributed = triggers.filter((t) => isDistributed(t.name));
      const onReference = triggers.filter((t) => placeOf(t.name) === 'reference' && notifying.has(t.fn));
      const count = (place: string) => tables.filter((t) => placeOf(t.name) === place).length;
      return [
        [
          'Inventory: tables of the public schema',
          `${tables.length}: ${count('distributed')} distributed, ${count('reference')} reference, ${count('local')} local, ` +
            `${unplaced.length} unplaced (${list(unplaced)}); with tenant_id: ${tables.filter((t) => t.tenant).length}`,
        ],
        [`Distributed tables without tenant_id (${withoutTenant.length})`, list(withoutTenant)],
        [`Keys of distributed tables without tenant_id (${keysWithout.length})`, list(keysWithout)],
        [`Foreign keys Citus would refuse as they are (${refused.length})`, list(refused)],
        [
          `Triggers on distributed tables that notify (${onDistributed.filter((t) => notifying.has(t.fn)).length})`,
          list(onDistributed.filter((t) => notifying.has(t.fn)).map((t) => `${t.name}.${t.trigger}`)),
        ],
        [
          `Triggers on distributed tables that write other rows (${onDistributed.filter((t) => writing.has(t.fn) && !notifying.has(t.fn)).length})`,
          list(
            onDistributed.filter((t) => writing.has(t.fn) && !notifying.has(t.fn)).map((t) => `${t.name}.${t.trigger}`),
          ),
        ],
        [
          `Triggers on reference tables that notify (${onReference.length})`,
          list(onReference.map((t) => `${t.name}.${t.trigger}`)),
        ],
      ];
    } finally {
      await client.end();
    }
  });
}
