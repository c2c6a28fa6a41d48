// Where a request's time goes, on a machine whose cores the load client, the
// API and PostgreSQL share: the CPU time each process spent over a load
// (from /proc, Linux only), divided by the requests it served.
import { readdirSync, readFileSync } from 'node:fs';
import type { Load } from './load.ts';

/** Clock ticks per second of /proc's utime and stime (CLK_TCK; 100 on Linux). */
const ticksPerSecond = 100;

/** Two adjacent fields of /proc/<pid>/stat, in milliseconds; 0 once the process is gone. */
function statMs(pid: number, field: number): number {
  try {
    // Fields after the command (which may hold spaces) in parentheses.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[field]) + Number(fields[field + 1])) * 1000) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** CPU the process has spent: utime and stime, the 12th and 13th fields after the command. */
export const cpuMs = (pid: number) => statMs(pid, 11);

/** CPU of the children a process has waited for (cutime and cstime): a server's backends that have closed. */
export const reapedCpuMs = (pid: number) => statMs(pid, 13);

/** A process and its children (PostgreSQL's backends are the postmaster's children). */
export function withChildren(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children];
}

/**
 * Runs the load and answers, beside it, the CPU microseconds per request of
 * each group of processes (children are looked up again after the load, so
 * connections opened meanwhile count).
 */
export async function cpuPerRequest<K extends string>(
  groups: Record<K, () => number[]>,
  run: () => Promise<Load>,
  seconds: number,
): Promise<{ load: Load; micros: Record<K, number> }> {
  const names = Object.keys(groups) as K[];
  const before = new Map<number, number>();
  for (const name of names) for (const pid of groups[name]()) before.set(pid, cpuMs(pid));
  const load = await run();
  const requests = load.perSecond * seconds;
  const micros = {} as Record<K, number>;
  for (const name of names) {
    const spent = groups[name]().reduce((sum, pid) => sum + cpuMs(pid) - (before.get(pid) ?? 0), 0);
    micros[name] = Math.round((spent * 1000) / requests);
  }
  return { load, micros };
}
