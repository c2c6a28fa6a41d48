// Whom a statement acts for, told to PostgreSQL's row-level security
// (migration 0034): each statement runs in a scope — one tenant, or every
// tenant — and the connection it runs on is set to that scope first.
//
// The scope follows the code's asynchronous context (`actingFor`), not its
// arguments: a request's database runs its statements acting for the
// request's tenant (./cancellable.ts), a job's handler for the job's tenant
// (worker/runner.ts), and anything outside every scope (the process's own
// bookkeeping) for all tenants. So a domain function needs no new parameter,
// and one that forgets its tenant filter still sees only its tenant's rows.
//
// Why a session setting, kept per connection, and not set_config(…, true) in
// each transaction: most statements run outside an explicit transaction, and
// a warm authenticated read makes one round trip in all; a setting sent with
// every borrow would double that. Each pg client remembers the scope it was
// last set to, and a statement for another scope is preceded by the
// SET on the same client — so it costs a round trip only when the
// connection changes tenant, and none in a run of one tenant's requests.
// Whatever may have undone the setting (a rollback, which also rolls back a
// SET made in its transaction) or failed to make it makes the client
// forget it, and its next statement sets it again.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

/** Every tenant's rows: for code that crosses tenants by nature, and the default outside any scope. */
export const allTenants = '*';

const scope = new AsyncLocalStorage<string>();

/** Runs `work` with every statement it makes acting for `tenant` (a tenant's id, or allTenants). */
export function actingFor<T>(tenant: string, work: () => T): T {
  return scope.run(tenant, work);
}

/** The scope statements made here would act for. */
export function currentScope(): string {
  return scope.getStore() ?? allTenants;
}

type ScopedClient = pg.Client & { tenantScope?: string | undefined };

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const undoesSettings = /^\s*(rollback|abort|reset|discard)\b/i;

let installed = false;

/**
 * From now on every pg client of this process sets app.tenant_id to the
 * scope of each statement before running it (see above). Called once a pool
 * connects as the application role; on connections that row security does
 * not bind (the tables' owner: graphile-worker's own pool), the setting is
 * inert and costs one statement per connection.
 *
 * `tenantScope` on a client is the scope of the last setting queued on it:
 * node-postgres runs a client's statements in the order they were queued, so
 * a statement queued while it equals the statement's own scope runs in it.
 */
export function enforceTenantScopes(): void {
  if (installed) return;
  installed = true;
  const query = pg.Client.prototype.query as (this: ScopedClient, ...args: unknown[]) => unknown;
  const scoped = function (this: ScopedClient, ...args: unknown[]) {
    if (undoesSettings.test(queryText(args[0]))) this.tenantScope = undefined;
    else {
      const wanted = scope.getStore() ?? allTenants;
      if (this.tenantScope !== wanted) return setThenRun(this, wanted, args);
    }
    return query.apply(this, args);
  };
  pg.Client.prototype.query = scoped as typeof pg.Client.prototype.query;

  function setThenRun(client: ScopedClient, wanted: string, args: unknown[]): unknown {
    // SET takes no parameter, hence the literal: only a uuid or '*' gets here.
    // (SET answers no row description, which a stream queued behind it would take for its own.)
    if (wanted !== allTenants && !uuidShape.test(wanted)) throw new TypeError(`not a tenant scope: ${wanted}`);
    const setting = query.call(client, `set app.tenant_id = '${wanted}'`) as Promise<unknown>;
    client.tenantScope = wanted;
    const forget = () => {
      if (client.tenantScope === wanted) client.tenantScope = undefined;
    };
    // The statement is queued once the setting holds (and asked again,
    // should another scope have been set meanwhile): if the setting failed (a
    // cancel landed on it, the connection broke), the statement fails too,
    // rather than run in whatever scope the connection was left.
    const run = () => scoped.apply(client, args);
    const [first] = args;
    const last = args.at(-1);
    if (typeof last === 'function') {
      // pg-pool's and graphile-worker's style: the error goes to the callback.
      setting.then(run, (error: unknown) => {
        forget();
        (last as (error: unknown) => void)(error);
      });
      return undefined;
    }
    if (isSubmittable(first)) {
      // A stream: pg answers with it, and it hears its own error.
      setting.then(run, (error: unknown) => {
        forget();
        (first as { handleError(error: unknown, connection: unknown): void }).handleError(error, client.connection);
      });
      return first;
    }
    return setting.then(run, (error: unknown) => {
      forget();
      throw error;
    });
  }
}

function isSubmittable(value: unknown): boolean {
  return typeof (value as { submit?: unknown } | null)?.submit === 'function';
}

function queryText(value: unknown): string {
  if (typeof value === 'string') return value;
  return (value as { text?: string } | null)?.text ?? '';
}
