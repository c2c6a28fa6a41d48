// A fixed-window request limit shared by every API process, that costs no
// database round trip on the request's path. Each process decides from what
// it knows: the key's count in the shared store as of its last sync, plus the
// requests it has let through since. Once a second (by default) it adds what
// it counted to the store (rate-limiter-flexible's table, in one statement for
// all its keys) and reads back the total every process counted for each key
// it tracks, and when the shared window ends. The price of not asking the
// store on every request: with N processes, a key can overshoot its limit by
// what the other N − 1 let through in one sync interval. If the store cannot
// be reached, each process goes on limiting alone and hands its counts over
// once it can.

/** A key's row in the store: its count and when its window ends (epoch ms). */
export type StoredCount = { key: string; points: number; expire: number };

/** The shared store: adds `counted` to each key's window (opening one of `windowMs` where none is open) and reads `known`. */
export type CountStore = (counted: Map<string, number>, known: string[], windowMs: number) => Promise<StoredCount[]>;

export type Verdict = {
  /** The policy's name, as in the RateLimit-Policy header. */
  policy: string;
  /** The policy as the RateLimit-Policy header states it: `"<name>";q=<limit>;w=<seconds>`. */
  policyField: string;
  allowed: boolean;
  limit: number;
  windowSeconds: number;
  /** Requests left in this window after this one. */
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
};

type Entry = { shared: number; pending: number; resetAt: number };

/** Keys per statement: a sync of many keys is a few statements, not one huge one. */
const syncBatch = 5000;

export class SharedWindow {
  readonly name: string;
  readonly limit: number;
  readonly windowSeconds: number;
  readonly policyField: string;
  refused = 0;
  readonly #store: CountStore;
  readonly #entries = new Map<string, Entry>();
  #syncing: Promise<void> | undefined;

  constructor(name: string, limit: number, windowSeconds: number, store: CountStore) {
    this.name = name;
    this.limit = limit;
    this.windowSeconds = windowSeconds;
    this.policyField = `"${name}";q=${limit};w=${windowSeconds}`;
    this.#store = store;
  }

  /**
   * Counts one request for `key` and says whether it may go on. Refused
   * requests count too: the store then shows who kept knocking, and since the
   * window is fixed, counting them never extends a block.
   */
  take(key: string): Verdict {
    const entry = this.#entry(key);
    const used = entry.shared + entry.pending;
    entry.pending++;
    const allowed = used < this.limit;
    if (!allowed) this.refused++;
    return this.#verdict(entry, allowed, allowed ? this.limit - used - 1 : 0);
  }

  /** Where `key` stands, counting nothing (for limits on failures, which count only through `fail`). */
  standing(key: string): Verdict {
    const entry = this.#entry(key);
    const used = entry.shared + entry.pending;
    return this.#verdict(entry, used < this.limit, Math.max(0, this.limit - used));
  }

  /**
   * Counts one failure for `key` (a bad webhook signature) and says whether
   * it was within the limit: the failures past it are refused.
   */
  fail(key: string): Verdict {
    const entry = this.#entry(key);
    const used = entry.shared + entry.pending;
    entry.pending++;
    const allowed = used < this.limit;
    if (!allowed) this.refused++;
    return this.#verdict(entry, allowed, Math.max(0, this.limit - used - 1));
  }

  /** Hands this process's counts to the shared store and learns everyone's; one sync at a time. */
  sync(): Promise<void> {
    return (this.#syncing ??= this.#push().finally(() => (this.#syncing = undefined)));
  }

  /** Keys this process is tracking now. */
  get size(): number {
    return this.#entries.size;
  }

  #entry(key: string): Entry {
    const now = Date.now();
    let entry = this.#entries.get(key);
    if (!entry || entry.resetAt <= now) {
      entry = { shared: 0, pending: 0, resetAt: now + this.windowSeconds * 1000 };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  #verdict(entry: Entry, allowed: boolean, remaining: number): Verdict {
    return {
      policy: this.name,
      policyField: this.policyField,
      allowed,
      limit: this.limit,
      windowSeconds: this.windowSeconds,
      remaining,
      resetSeconds: Math.max(1, Math.ceil((entry.resetAt - Date.now()) / 1000)),
    };
  }

  async #push(): Promise<void> {
    // Windows that ended with nothing left to hand over are forgotten.
    const now = Date.now();
    for (const [key, entry] of this.#entries) {
      if (entry.resetAt <= now && entry.pending === 0) this.#entries.delete(key);
    }
    const keys = [...this.#entries.keys()];
    for (let start = 0; start < keys.length; start += syncBatch)
      await this.#pushBatch(keys.slice(start, start + syncBatch));
  }

  async #pushBatch(keys: string[]): Promise<void> {
    const counted = new Map<string, number>();
    for (const key of keys) {
      const pending = this.#entries.get(key)!.pending;
      if (pending > 0) counted.set(key, pending);
    }
    let rows: StoredCount[];
    try {
      rows = await this.#store(counted, keys, this.windowSeconds * 1000);
    } catch {
      // The store is unreachable: keep limiting locally and hand these counts over next time.
      return;
    }
    const now = Date.now();
    for (const row of rows) {
      const entry = this.#entries.get(row.key);
      if (!entry) continue;
      // What arrived during the statement stays pending for the next sync.
      entry.pending -= counted.get(row.key) ?? 0;
      if (row.expire <= now) {
        entry.shared = 0;
      } else {
        entry.shared = row.points;
        // The store's window is the one every process shares.
        entry.resetAt = row.expire;
      }
    }
  }
}
