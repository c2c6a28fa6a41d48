// The kill tests' loop (test/worker/*kills.test.ts): two worker processes
// killed with SIGKILL at random moments while jobs keep coming, each started
// again at once, until `kills` kills were made. Now and then both at once:
// then only their restarts can release their runs. Answers the workers left
// running and how long each kill's runs took to be released (its process's
// heartbeat row gone, because its pid is), in the order of the kills.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import type { Random } from '../fuzz/engine.ts';
import type { TestApp } from './app.ts';
import { pollUntil } from './poll.ts';
import { startWorkerProcess, stopProcess, type Started } from './processes.ts';

export type KillLoop = {
  kills: number;
  random: Random;
  /** The workers' configuration (their providers, concurrency, heartbeat). */
  env: Record<string, string>;
  /** Every process started, for the test's afterEach to kill what is left. */
  running: Set<Started>;
  /** Called before each kill: so that every kill finds work under way. */
  topUp: () => Promise<void>;
  /**
   * Called with the victim's pid just before it is killed (to see what it was
   * doing, or to hold it somewhere); what it answers is called once it is dead.
   */
  beforeKill?: (pid: number) => Promise<void | (() => Promise<void>)>;
  /** The longest pause before a kill. */
  pauseMs?: number;
};

export async function killWorkersAtRandom(
  t: TestApp,
  loop: KillLoop,
): Promise<{ workers: Started[]; killed: number; releases: number[] }> {
  const { random, running } = loop;
  const spawn = async () => {
    const started = await startWorkerProcess(t, { LOG_LEVEL: 'info', ...loop.env });
    running.add(started);
    // Its heartbeat row is written before it handles SIGTERM (worker/main.ts installs that once startWorker
    // returns, after the first beat has reaped the dead): a SIGTERM in between would end it as a SIGKILL does.
    const ready = await pollUntil(
      () => Promise.resolve(started.output().includes('"msg":"worker started"')),
      (yes) => yes,
      { tries: 1500, everyMs: 20 },
    );
    if (!ready) throw new Error(`the worker process did not say it started:\n${started.output()}`);
    return started;
  };
  const rowGone = (pid: number) =>
    pollUntil(
      () =>
        t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
          select count(*)::int as count from worker_processes where pid = ${pid}`),
      (rows) => rows === 0,
      { tries: 3000, everyMs: 20 },
    );
  const workers = await Promise.all([spawn(), spawn()]);
  let killed = 0;
  const releases: number[] = [];
  while (killed < loop.kills) {
    await loop.topUp();
    await new Promise((resolve) => setTimeout(resolve, random.int(loop.pauseMs ?? 1000)));
    const victims = random.chance(0.1) && killed + 2 <= loop.kills ? [0, 1] : [random.int(2)];
    const released: Promise<unknown>[] = [];
    for (const index of victims) {
      const victim = workers[index]!;
      const pid = victim.child.pid!;
      const afterKill = await loop.beforeKill?.(pid);
      await stopProcess(victim, 'SIGKILL');
      await afterKill?.();
      running.delete(victim);
      const at = Date.now();
      const nth = killed++;
      released.push(rowGone(pid).then(() => (releases[nth] = Date.now() - at)));
    }
    await Promise.all(
      victims.map(async (index) => {
        workers[index] = await spawn();
      }),
    );
    await Promise.all(released);
  }
  return { workers, killed, releases };
}
