// A statement whose commit does not wait for the disk: `synchronous_commit`
// off for its own transaction only. For what reports on work rather than is
// the work — a job's progress, the record of a provider call, an indexing
// stage, a model call's step — where each write costs a flush the writer
// waits for, and a crash of the database itself may lose the last moment's
// reports but never one that came before a write that was acknowledged (the
// log is written in order, so flushing a later commit flushes them too).
// Never inside a transaction that writes work: the setting would hold for
// its commit. The statement uses it as `exists (select from unhurried)` or
// `from unhurried`, since PostgreSQL skips a CTE nothing reads.
import { sql } from './pool.ts';

export const unhurried = sql.fragment`with unhurried as (select set_config('synchronous_commit', 'off', true))`;
