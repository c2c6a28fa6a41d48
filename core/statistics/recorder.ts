// Counting requests, public views, security signals (failed sign-ins,
// 401/403/404/405 by client network) and what readers search for (a row a
// search in search_queries) without a database write per request:
// counts gather in this process's memory, keyed by minute, and are written
// once a minute (and when the process stops) in one statement per table,
// adding to whatever other processes wrote for the same minute. A crash loses
// at most the minute not yet written.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Logger } from '../logger.ts';
import { bucketCount, bucketOf, mergeBuckets } from './histogram.ts';

/** Queries are kept as typed, lower-cased and with spaces collapsed, so "Shoes " and "shoes" count together. */
const normalizedQuery = (text: string) => text.trim().toLowerCase().replace(/\s+/g, ' ');

export type ViewKind = 'page' | 'element' | 'post' | 'media';

type RequestCell = {
  minute: number;
  siteId: string | null;
  route: string;
  statusClass: number;
  count: number;
  durationMs: number;
  buckets: number[];
};
type ViewCell = { day: string; siteId: string; kind: ViewKind; itemId: string; views: number };
/** Searches of one minute with the same site, query, locale and hit count. */
type SearchCell = { minute: number; siteId: string; query: string; locale: string | null; hits: number; count: number };
const searchKey = (cell: Omit<SearchCell, 'count'>) =>
  `${cell.minute}|${cell.siteId}|${cell.locale ?? ''}|${cell.hits}|${cell.query}`;
/**
 * Distinct searches kept between flushes: a flood of made-up queries must not
 * grow the process without bound; past it, searches go unlogged (and say so).
 */
const maxSearchCells = 20_000;

/** What the security dashboard and threat intelligence count, by client network. */
export type SignalKind = 'login_failed' | 'unauthorized' | 'forbidden' | 'not_found' | 'method_not_allowed';
type SignalCell = {
  minute: number;
  kind: SignalKind;
  network: string;
  count: number;
  accounts: string[];
  first: number;
  last: number;
};

/** Distinct accounts kept per network and minute: enough to tell stuffing from one forgetful user. */
const accountsPerCell = 50;

export class StatisticsRecorder {
  readonly process = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  #requests = new Map<string, RequestCell>();
  #views = new Map<string, ViewCell>();
  #day = '';
  #dayStarts = Number.NEGATIVE_INFINITY;
  #signals = new Map<string, SignalCell>();
  #searches = new Map<string, SearchCell>();
  #searchesUnlogged = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<unknown> = Promise.resolve();
  lastFlushAt: Date | null = null;

  readonly #flushSeconds: number;
  readonly #logger: Logger;

  constructor(flushSeconds: number, logger: Logger) {
    this.#flushSeconds = flushSeconds;
    this.#logger = logger;
  }

  /** One answered API request: its site (if any), its manifest route, status and time taken. */
  request(siteId: string | null, route: string, status: number, ms: number): void {
    const statusClass = Math.min(5, Math.max(1, Math.floor(status / 100)));
    const cell = this.#requestCell(Math.floor(Date.now() / 60_000), siteId, route, statusClass);
    cell.count += 1;
    cell.durationMs += ms;
    cell.buckets[bucketOf(ms)]! += 1;
  }

  /** One public read of an item. */
  view(siteId: string, kind: ViewKind, itemId: string): void {
    this.#viewCell(this.#today(), siteId, kind, itemId).views += 1;
  }

  /** One public search (its first page), for the site's search analytics: what was asked, never who asked. */
  search(siteId: string, text: string, locale: string | undefined, hits: number): void {
    const cell = {
      minute: Math.floor(Date.now() / 60_000),
      siteId,
      query: normalizedQuery(text),
      locale: locale ?? null,
      hits,
    };
    this.#addSearches(cell, 1);
  }

  #addSearches(cell: Omit<SearchCell, 'count'>, count: number): void {
    const key = searchKey(cell);
    const current = this.#searches.get(key);
    if (current) current.count += count;
    else if (this.#searches.size < maxSearchCells) this.#searches.set(key, { ...cell, count });
    else this.#searchesUnlogged += count;
  }

  /** The UTC day, as 2026-11-25: made once a day rather than once a view. */
  #today(): string {
    const now = Date.now();
    if (now < this.#dayStarts || now >= this.#dayStarts + 86_400_000) {
      this.#dayStarts = now - (now % 86_400_000);
      this.#day = new Date(now).toISOString().slice(0, 10);
    }
    return this.#day;
  }

  /** A security signal from a client network: a failed sign-in (with the account tried), or a 401/403/404/405. */
  signal(kind: SignalKind, network: string, account?: string): void {
    const now = Date.now();
    const cell = this.#signalCell(Math.floor(now / 60_000), kind, network, now);
    cell.count += 1;
    cell.last = now;
    const tried = account?.trim().toLowerCase();
    if (tried && cell.accounts.length < accountsPerCell && !cell.accounts.includes(tried)) cell.accounts.push(tried);
  }

  #signalCell(minute: number, kind: SignalKind, network: string, first: number): SignalCell {
    const key = `${minute}|${kind}|${network}`;
    let cell = this.#signals.get(key);
    if (!cell) {
      cell = { minute, kind, network, count: 0, accounts: [], first, last: first };
      this.#signals.set(key, cell);
    }
    return cell;
  }

  /** The minute's cell of a site, route and status class, made empty on first use. */
  #requestCell(minute: number, siteId: string | null, route: string, statusClass: number): RequestCell {
    const key = `${minute}|${siteId ?? ''}|${route}|${statusClass}`;
    let cell = this.#requests.get(key);
    if (!cell) {
      cell = {
        minute,
        siteId,
        route,
        statusClass,
        count: 0,
        durationMs: 0,
        buckets: new Array<number>(bucketCount).fill(0),
      };
      this.#requests.set(key, cell);
    }
    return cell;
  }

  #viewCell(day: string, siteId: string, kind: ViewKind, itemId: string): ViewCell {
    const key = `${day}|${siteId}|${kind}|${itemId}`;
    let cell = this.#views.get(key);
    if (!cell) {
      cell = { day, siteId, kind, itemId, views: 0 };
      this.#views.set(key, cell);
    }
    return cell;
  }

  /** What is counted but not yet written. */
  pending(): { requests: number; views: number } {
    let requests = 0;
    for (const cell of this.#requests.values()) requests += cell.count;
    let views = 0;
    for (const cell of this.#views.values()) views += cell.views;
    return { requests, views };
  }

  start(db: CommonQueryMethods): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.flush(db).catch((error: Error) =>
        this.#logger.warn({ err: error.message }, 'statistics flush failed; kept for the next'),
      );
    }, this.#flushSeconds * 1000);
    this.#timer.unref();
  }

  /** Writes what was counted; one flush at a time. On failure the counts are put back for the next. */
  flush(db: CommonQueryMethods): Promise<{ requests: number; views: number }> {
    const run = this.#flushing.then(() => this.#write(db));
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  async stop(db: CommonQueryMethods): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush(db).catch((error: Error) =>
      this.#logger.warn({ err: error.message }, 'last statistics flush failed'),
    );
  }

  async #write(db: CommonQueryMethods): Promise<{ requests: number; views: number }> {
    const requests = [...this.#requests.values()];
    const views = [...this.#views.values()];
    const signals = [...this.#signals.values()];
    const searches = [...this.#searches.values()];
    this.#requests = new Map();
    this.#views = new Map();
    this.#signals = new Map();
    this.#searches = new Map();
    if (this.#searchesUnlogged > 0) {
      this.#logger.warn(
        { searches: this.#searchesUnlogged },
        'searches not logged: too many distinct queries in one flush',
      );
      this.#searchesUnlogged = 0;
    }
    const counted = {
      requests: requests.reduce((sum, cell) => sum + cell.count, 0),
      views: views.reduce((sum, cell) => sum + cell.views, 0),
    };
    try {
      await db.transaction(async (tx) => {
        if (requests.length > 0)
          await tx.query(sql.typeAlias('void')`
            insert into request_stats (minute, site_id, route, status_class, count, duration_ms, buckets)
            select to_timestamp((r->>'minute')::bigint * 60), (r->>'siteId')::uuid, r->>'route', (r->>'statusClass')::smallint,
              (r->>'count')::int, (r->>'durationMs')::float8,
              array(select b::int from jsonb_array_elements_text(r->'buckets') b)
            from jsonb_array_elements(${sql.jsonb(requests as never)}) r
            -- A site deleted since its requests were counted takes its statistics with it.
            where r->>'siteId' is null or exists (select 1 from sites where id = (r->>'siteId')::uuid)
            on conflict on constraint request_stats_key do update set
              count = request_stats.count + excluded.count,
              duration_ms = request_stats.duration_ms + excluded.duration_ms,
              buckets = array(select a + b from unnest(request_stats.buckets, excluded.buckets) as t(a, b))`);
        if (views.length > 0)
          await tx.query(sql.typeAlias('void')`
            insert into view_stats (day, site_id, kind, item_id, views)
            select (v->>'day')::date, (v->>'siteId')::uuid, v->>'kind', (v->>'itemId')::uuid, (v->>'views')::int
            from jsonb_array_elements(${sql.jsonb(views as never)}) v
            where exists (select 1 from sites where id = (v->>'siteId')::uuid)
            on conflict (site_id, day, kind, item_id) do update set views = view_stats.views + excluded.views`);
        if (signals.length > 0)
          await tx.query(sql.typeAlias('void')`
            insert into security_counts (minute, kind, network, count, accounts, first_seen, last_seen)
            select to_timestamp((g->>'minute')::bigint * 60), g->>'kind', g->>'network', (g->>'count')::int,
              array(select jsonb_array_elements_text(g->'accounts')),
              to_timestamp((g->>'first')::float8 / 1000), to_timestamp((g->>'last')::float8 / 1000)
            from jsonb_array_elements(${sql.jsonb(signals as never)}) g
            on conflict on constraint security_counts_key do update set
              count = security_counts.count + excluded.count,
              accounts = (select coalesce(array_agg(distinct a), '{}') from (
                select a from unnest(security_counts.accounts || excluded.accounts) a limit ${accountsPerCell}) kept),
              first_seen = least(security_counts.first_seen, excluded.first_seen),
              last_seen = greatest(security_counts.last_seen, excluded.last_seen)`);
        if (searches.length > 0)
          // A row a search, as search analytics count them, stamped with its minute.
          await tx.query(sql.typeAlias('void')`
            insert into search_queries (site_id, query, locale, hits, created_at)
            select (q->>'siteId')::uuid, q->>'query', q->>'locale', (q->>'hits')::int, to_timestamp((q->>'minute')::bigint * 60)
            from jsonb_array_elements(${sql.jsonb(searches as never)}) q, generate_series(1, (q->>'count')::int)
            where exists (select 1 from sites where id = (q->>'siteId')::uuid)`);
        await tx.query(sql.typeAlias('void')`
          insert into stats_flushes (process, flushed_at, requests, views)
          values (${this.process}, now(), ${counted.requests}, ${counted.views})
          on conflict (process) do update set flushed_at = now(), requests = excluded.requests, views = excluded.views`);
      });
      this.lastFlushAt = new Date();
      return counted;
    } catch (error) {
      // Put back, added to what came in meanwhile, for the next flush.
      for (const cell of requests) {
        const current = this.#requestCell(cell.minute, cell.siteId, cell.route, cell.statusClass);
        current.count += cell.count;
        current.durationMs += cell.durationMs;
        mergeBuckets(current.buckets, cell.buckets);
      }
      for (const cell of searches) this.#addSearches(cell, cell.count);
      for (const cell of views) this.#viewCell(cell.day, cell.siteId, cell.kind, cell.itemId).views += cell.views;
      for (const cell of signals) {
        const current = this.#signalCell(cell.minute, cell.kind, cell.network, cell.first);
        current.count += cell.count;
        current.first = Math.min(current.first, cell.first);
        current.last = Math.max(current.last, cell.last);
        for (const account of cell.accounts)
          if (current.accounts.length < accountsPerCell && !current.accounts.includes(account))
            current.accounts.push(account);
      }
      throw error;
    }
  }
}
