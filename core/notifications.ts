// PostgreSQL notifications for this process: one LISTEN connection, shared by
// every channel (job changes, access changes), connected on first use and
// replaced when it is lost. Whoever relies on hearing every notification (a
// cache) is told when the connection goes and comes back, since what was
// sent in between is lost.
import pg from 'pg';
import type { Logger } from './logger.ts';

type Handler = (payload: string) => void;
type StateListener = (listening: boolean) => void;

const reconnectDelayMs = 500;

export class Notifications {
  readonly #databaseUrl: string;
  readonly #logger: Logger;
  readonly #channels = new Map<string, Set<Handler>>();
  readonly #stateListeners = new Set<StateListener>();
  #client: Promise<pg.Client> | undefined;
  #listening = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(databaseUrl: string, logger: Logger) {
    this.#databaseUrl = databaseUrl;
    this.#logger = logger;
  }

  /** Whether notifications are being received now: false before the first listen and while reconnecting. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Calls `listener` whenever listening starts or stops. */
  onStateChange(listener: StateListener): () => void {
    this.#stateListeners.add(listener);
    return () => this.#stateListeners.delete(listener);
  }

  /** Resolves once the channel's notifications reach `handler`; the returned function stops them. */
  async listen(channel: string, handler: Handler): Promise<() => void> {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    const handlers = this.#channels.get(channel) ?? new Set();
    const fresh = handlers.size === 0;
    handlers.add(handler);
    this.#channels.set(channel, handlers);
    const stop = () => {
      handlers.delete(handler);
      if (handlers.size === 0) this.#channels.delete(channel);
    };
    try {
      const client = await this.#connection();
      if (fresh) await this.#serially(() => client.query(`listen ${channel}`));
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  /**
   * One round trip on the listening connection. PostgreSQL hands a listening
   * session the notifications committed before a statement ahead of that
   * statement's answer, so once this resolves this process has heard every
   * change committed before it was called.
   */
  async sync(): Promise<void> {
    const client = this.#client;
    if (!this.#listening || !client) return;
    await this.#serially(async () => (await client).query('select 1')).catch(() => undefined);
  }

  /** One statement at a time on the connection (pg no longer queues them for us): callers wait in line. */
  #serially<T>(statement: () => Promise<T>): Promise<T> {
    const turn = this.#queue.then(statement);
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#setListening(false);
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }

  #connection(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('notifications are closed'));
    this.#client ??= this.#connect().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
    return this.#client;
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.#databaseUrl, application_name: 'notifications' });
    client.on('notification', (message) => {
      for (const handler of this.#channels.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client));
    await client.connect();
    for (const channel of this.#channels.keys()) await client.query(`listen ${channel}`);
    this.#setListening(true);
    return client;
  }

  /** The connection is gone: whatever was notified meanwhile is lost, so say so, and listen again soon. */
  #lost(client: pg.Client, error?: Error): void {
    client.removeAllListeners('end');
    client.end().catch(() => {});
    if (this.#closed) return;
    if (error) this.#logger.warn({ err: error.message }, 'notifications connection lost');
    this.#client = undefined;
    this.#setListening(false);
    const retry = () => {
      if (this.#closed || this.#client || this.#channels.size === 0) return;
      this.#connection().catch(() => setTimeout(retry, reconnectDelayMs * 4).unref());
    };
    setTimeout(retry, reconnectDelayMs).unref();
  }

  #setListening(listening: boolean): void {
    if (this.#listening === listening) return;
    this.#listening = listening;
    for (const listener of this.#stateListeners) listener(listening);
  }
}

/**
 * A channel listened to for as long as a cache lives: tried again every 2 s
 * while it cannot be, and `active` only while notifications are heard (a
 * cache keeps nothing otherwise, since a change could go unheard).
 */
export class Subscription {
  readonly #notifications: Notifications;
  #stop: (() => void) | undefined;
  #closed = false;

  constructor(
    notifications: Notifications,
    channel: string,
    handler: Handler,
    onError: (error: Error) => void,
    retryMs = 2000,
  ) {
    this.#notifications = notifications;
    const listen = () => {
      if (this.#closed) return;
      notifications
        .listen(channel, handler)
        .then((stop) => {
          if (this.#closed) stop();
          else this.#stop = stop;
        })
        .catch((error: unknown) => {
          onError(error as Error);
          setTimeout(listen, retryMs).unref();
        });
    };
    listen();
  }

  get active(): boolean {
    return this.#stop !== undefined && this.#notifications.listening;
  }

  close(): void {
    this.#closed = true;
    this.#stop?.();
  }
}
