// Cancels a server process's running statement (pg_cancel_backend) over a
// connection of its own: a request cut off at its deadline still holds its
// pooled connection until the cancel has landed, so the cancel cannot wait
// for the pool — when every pooled connection belongs to a request being
// cancelled, it would wait forever. Connected on first use, kept, replaced
// when lost; cancels go one at a time.
import pg from 'pg';

export class BackendCanceller {
  readonly #databaseUrl: string;
  #client: Promise<pg.Client> | undefined;
  #closed = false;
  #last: Promise<void> = Promise.resolve();

  constructor(databaseUrl: string) {
    this.#databaseUrl = databaseUrl;
  }

  /** Resolves once the server has been told; never rejects (a statement that runs on is the only harm). */
  cancel(pid: number): Promise<void> {
    if (this.#closed) return Promise.resolve();
    // One at a time: a pg client runs one statement at a time.
    const done = this.#last.then(async () => {
      // Closed while this one waited its turn: a connection opened now would never be closed.
      if (this.#closed) return;
      try {
        const client = await (this.#client ??= this.#connect());
        await client.query('select pg_cancel_backend($1)', [pid]);
      } catch {
        this.#client = undefined;
      }
    });
    this.#last = done;
    return done;
  }

  async close(): Promise<void> {
    this.#closed = true;
    // A cancel under way may be opening the connection: let it finish, then end what it opened.
    await this.#last;
    const client = this.#client;
    this.#client = undefined;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.#databaseUrl, application_name: 'statement-canceller' });
    client.on('error', () => {
      this.#client = undefined;
      client.end().catch(() => {});
    });
    await client.connect();
    return client;
  }
}
