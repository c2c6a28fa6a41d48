// Agent run events (./run-events.ts) on PostgreSQL's `agent_run_events`
// channel: the worker notifies each as it happens, and each API process
// listens once (on its notifications connection) and hands them to the
// streams that follow that run. A notification is at most 8000 bytes (the
// server's limit): the worker sends text in pieces well below it, and an
// event too large to carry (a tool call's long arguments) goes without its
// data, telling the streams to read it from the run's record instead.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Notifications } from '../notifications.ts';
import type { PlacedEvent, RunEvent } from './run-events.ts';

const channel = 'agent_run_events';
/** PostgreSQL refuses a payload of 8000 bytes or more; a little is kept back. */
const maxPayloadBytes = 7900;

/**
 * Notifies the run's events, in order, in one statement; an event that would
 * not fit goes as a notice that there is one, for whoever listens.
 */
export async function publishRunEvents(db: CommonQueryMethods, runId: string, events: PlacedEvent[]): Promise<void> {
  const payloads = events.map((placed) => {
    const payload = JSON.stringify({ run: runId, id: placed.id, event: placed.event });
    return Buffer.byteLength(payload) > maxPayloadBytes ? JSON.stringify({ run: runId, id: placed.id }) : payload;
  });
  // A function scan yields the array's elements in order, and each is notified as its row is made.
  await db.query(sql.typeAlias('void')`
    select from unnest(${sql.array(payloads, 'text')}) as payload, pg_notify(${channel}, payload)`);
}

// The payload is ours, but parsed as anything from outside is: a bad one is dropped.
const notice = z.object({
  run: z.uuid(),
  id: z.string(),
  event: z.looseObject({ type: z.string() }).optional(),
});

/**
 * What a follower of a run hears: an event as it happened, or a nudge (no
 * event) — one too large to carry, or notifications that may have been
 * missed while the connection was down — meaning "read the record again".
 */
export type RunNotice = { id?: string; event?: RunEvent };
type Listener = (notice: RunNotice) => void;

/** The runs' events heard by this process, fanned out to the streams that follow each run. */
export class RunEvents {
  readonly #notifications: Notifications;
  readonly #listeners = new Map<string, Set<Listener>>();
  #stop: Promise<() => void> | undefined;

  constructor(notifications: Notifications) {
    this.#notifications = notifications;
    notifications.onStateChange((listening) => {
      if (!listening) return;
      for (const listeners of this.#listeners.values()) for (const listener of listeners) listener({});
    });
  }

  /** Resolves once the run's events are being received, so a read of its record after it misses nothing. */
  async subscribe(runId: string, listener: Listener): Promise<() => void> {
    const listeners = this.#listeners.get(runId) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(runId, listeners);
    const unsubscribe = () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.#listeners.delete(runId);
    };
    try {
      this.#stop ??= this.#notifications
        .listen(channel, (payload) => this.#dispatch(payload))
        .catch((error: unknown) => {
          this.#stop = undefined;
          throw error;
        });
      await this.#stop;
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /** How many runs this process follows now. */
  get followed(): number {
    return this.#listeners.size;
  }

  #dispatch(payload: string): void {
    let parsed: z.infer<typeof notice>;
    try {
      const raw = JSON.parse(payload) as { run?: unknown };
      // Most notifications are for runs nobody here follows: they are not checked further.
      if (typeof raw?.run !== 'string' || !this.#listeners.has(raw.run)) return;
      parsed = notice.parse(raw);
    } catch {
      return;
    }
    const heard: RunNotice = parsed.event ? { id: parsed.id, event: parsed.event as RunEvent } : { id: parsed.id };
    for (const listener of this.#listeners.get(parsed.run) ?? []) listener(heard);
  }
}
