// Whether a pid recorded by another worker process still names that process.
// A pid only means something within one pid namespace of one kernel boot: a
// container has its own namespace (its pid 40 is not the host's), and a
// reboot starts the count again. So a process records its scope (the boot id
// and its pid namespace) and its start time, and judges another's pid only
// when the scopes match; a pid alive with another start time was reused.
// Off Linux (no /proc) the scope is unknown and nothing is judged by pid.
import { readFileSync, readlinkSync } from 'node:fs';

export type ProcessIdentity = { pid: number; scope: string | null; started: number | null };

const attempt = <T>(read: () => T): T | null => {
  try {
    return read();
  } catch {
    return null;
  }
};

/**
 * From /proc/<pid>/stat: the state (field 3; Z for a zombie, which runs
 * nothing) and the clock ticks after boot at which it started (field 22).
 */
function stat(pid: number): { state: string; started: number | null } | null {
  const text = attempt(() => readFileSync(`/proc/${pid}/stat`, 'latin1'));
  if (!text) return null;
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return { state: fields[0] ?? '', started: Number.isSafeInteger(ticks) ? ticks : null };
}

/** When `pid` started, in clock ticks after boot; null when it cannot be read. */
export const startedAt = (pid: number): number | null => stat(pid)?.started ?? null;

export function ownIdentity(): ProcessIdentity {
  const boot = attempt(() => readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim());
  const namespace = attempt(() => readlinkSync('/proc/self/ns/pid'));
  return {
    pid: process.pid,
    scope: boot && namespace ? `${boot}/${namespace}` : null,
    started: startedAt(process.pid),
  };
}

/**
 * True when the process `other` recorded is certainly gone: its scope is ours
 * and its pid names no process, a zombie, or a process that started at
 * another time (our own pid too, when a test runs several workers in one).
 * Anything unsure (another scope, no start times, no permission to look) is
 * not gone: the heartbeat's WORKER_LOST_AFTER_MS judges it instead.
 */
export function certainlyGone(own: ProcessIdentity, other: ProcessIdentity): boolean {
  if (own.scope === null || other.scope !== own.scope || !(other.pid > 0)) return false;
  try {
    process.kill(other.pid, 0);
  } catch (error) {
    // EPERM: a process of another user holds the pid, so it is alive (or reused: unsure).
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const now = stat(other.pid);
  if (now?.state === 'Z') return true;
  return other.started !== null && now?.started != null && now.started !== other.started;
}
