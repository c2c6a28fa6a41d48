// What the request path asks on every call — is this token's session live,
// is this service account active, which site is this and what is the caller
// there — kept in this process, so a warm read costs no round trip for it.
// Kept only while this process hears the `access_changed` notifications
// (db/migrations/0009): a logout, a block, a role change or a removed
// membership, made by any process, drops what it touches at once. While the
// notifications connection is down nothing is kept, since a change could go
// unheard. Entries also age out (ACCESS_CACHE_SECONDS) and the maps are
// bounded, oldest out first.
import type { CommonQueryMethods } from '../db/pool.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { Subscription, type Notifications } from './notifications.ts';
import { takeOldest } from './cache-eviction.ts';
import type { Site } from './tenancy/sites.ts';
import { findPublicSite, findSiteAccess, type SiteAccess } from './tenancy/site-access.ts';
import type { Actor } from './actor.ts';
import {
  accessClaims,
  actorOf,
  findActiveAccount,
  findLiveSession,
  type ActiveAccount,
  type Authenticated,
  type LiveSession,
  bearerToken,
} from './identity/authenticate.ts';
import {
  apiKeyPattern,
  findLiveKey,
  keyActor,
  keyClaims,
  looksLikeApiKey,
  touchApiKey,
  type LiveKey,
} from './identity/api-keys.ts';
import { digest } from './identity/secrets.ts';
import { invalidToken, type Claims } from './identity/tokens.ts';

type Entry<V> = { value: V; expiresAt: number };

/** A bounded map of entries that expire; Map keeps insertion order, so the first key is the oldest. */
class ExpiringMap<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #maxEntries: number;
  hits = 0;
  misses = 0;
  evictions = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(key: string, now: number): V | undefined {
    const value = this.peek(key, now);
    if (value === undefined) this.misses++;
    return value;
  }

  /** As get(), but finding nothing is not counted a miss: the caller goes on to get() (and its load). */
  peek(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > now) {
      this.hits++;
      return entry.value;
    }
    if (entry) this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, expiresAt: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      takeOldest(this.#entries);
      this.evictions++;
    }
    this.#entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Drops every entry whose key starts with `prefix`: a walk over the map, for the rare change that names part of a key. */
  deleteStartingWith(prefix: string): void {
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Drops the entries past their time now (they would otherwise go when next asked for); answers how many. */
  prune(now: number): number {
    let removed = 0;
    for (const [key, entry] of this.#entries)
      if (entry.expiresAt <= now) {
        this.#entries.delete(key);
        removed++;
      }
    return removed;
  }
}

export type CacheFigures = {
  name: string;
  store: 'memory' | 'redis';
  entries: number;
  hits: number;
  misses: number;
  evictions: number;
};

/**
 * A session is kept under its id and its user's: a token pairing the session
 * with anyone else is asked about afresh (and refused), never answered from
 * what the owner's token made known.
 */
const sessionKey = (sessionId: string, userId: string) => `${sessionId} ${userId}`;

// A key's holder reaches less through the key than with their own token: its answers are kept apart.
const actorKey = (actor: Actor) =>
  actor.apiKey ? `k:${actor.apiKey.id}` : actor.kind === 'user' ? `u:${actor.userId}` : `s:${actor.serviceAccountId}`;

/** A key's last use is written at most this often, per key and process: not a write per request. */
const keyUseIntervalMs = 60_000;

export type AccessCacheOptions = { ttlMs: number; maxEntries: number };

export class AccessCache {
  readonly #notifications: Notifications | undefined;
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #ttlMs: number;
  readonly #claims: ExpiringMap<Claims>;
  readonly #sessions: ExpiringMap<LiveSession>;
  readonly #accounts: ExpiringMap<ActiveAccount>;
  readonly #sites: ExpiringMap<Omit<SiteAccess, 'actor'>>;
  readonly #publicSites: ExpiringMap<Site>;
  readonly #keys: ExpiringMap<LiveKey>;
  /** Keys whose use this process recorded within the last minute. */
  readonly #keyUses: ExpiringMap<true>;
  /** Bumped by every forgetting: a load that began before it is not kept. */
  #generation = 0;
  #subscription: Subscription | undefined;

  constructor(config: Config, logger: Logger, notifications?: Notifications) {
    this.#config = config;
    this.#logger = logger;
    this.#notifications = notifications;
    this.#ttlMs = config.accessCache.ttlSeconds * 1000;
    const max = config.accessCache.maxEntries;
    this.#claims = new ExpiringMap(max);
    this.#sessions = new ExpiringMap(max);
    this.#accounts = new ExpiringMap(max);
    this.#sites = new ExpiringMap(max);
    this.#publicSites = new ExpiringMap(max);
    this.#keys = new ExpiringMap(max);
    this.#keyUses = new ExpiringMap(max);
    notifications?.onStateChange(() => this.#forgetAll());
  }

  /** Starts listening for changes; until it does (and whenever it cannot), every question goes to the database. */
  start(): void {
    if (!this.#notifications || this.#ttlMs === 0) return;
    this.#subscription = new Subscription(
      this.#notifications,
      'access_changed',
      (payload) => this.#changed(payload),
      (error) => this.#logger.warn({ err: error.message }, 'access changes not heard; the access cache waits'),
    );
  }

  /** Whether answers are being kept: only while every change is heard. */
  get enabled(): boolean {
    return this.#subscription?.active ?? false;
  }

  /** Until this resolves, this process may not have heard changes committed before the call. */
  async settled(): Promise<void> {
    if (this.enabled) await this.#notifications!.sync();
  }

  /**
   * Who holds this bearer header (the actor's id), if this process has
   * verified the token already; asks nothing and verifies nothing. For routes
   * that take no token but read a caller's own writes when they know them
   * (db/replica.ts).
   */
  knownCaller(header: string | undefined): string | undefined {
    return header === undefined ? undefined : this.#claims.peek(header, Date.now())?.sub;
  }

  /** The caller behind a bearer header: 401 for a bad token, an ended session or a disabled account. */
  async authenticate(db: CommonQueryMethods, header: string | undefined): Promise<Authenticated> {
    const now = Date.now();
    if (header && looksLikeApiKey(bearerToken(header))) return this.#byKey(db, bearerToken(header), now);
    // The token's signature is checked once; the map holds only tokens that verified, until they expire.
    let claims = header ? this.#claims.get(header, now) : undefined;
    if (!claims) {
      claims = accessClaims(this.#config, header);
      this.#claims.set(header!, claims, claims.exp * 1000);
    }
    if (claims.act === 'service') {
      const account = await this.#cached(this.#accounts, claims.sub, now, () => findActiveAccount(db, claims.sub));
      return actorOf(claims, { account });
    }
    const session = claims.sid
      ? await this.#cached(
          this.#sessions,
          sessionKey(claims.sid, claims.sub),
          now,
          () => findLiveSession(db, claims.sid!, claims.sub),
          (found) => Date.parse(found.expires_at),
        )
      : null;
    return actorOf(claims, { session });
  }

  /** The caller an API key stands for: 401 for an unknown, revoked or expired key, or a holder who can no longer act. */
  async #byKey(db: CommonQueryMethods, presented: string, now: number): Promise<Authenticated> {
    if (!apiKeyPattern.test(presented)) throw invalidToken('The API key is not valid.');
    const hash = digest(presented);
    const key = await this.#cached(
      this.#keys,
      hash.toString('base64url'),
      now,
      () => findLiveKey(db, hash),
      (found) => (found.expires_at ? Date.parse(found.expires_at) : Infinity),
    );
    if (!key || (key.expires_at && Date.parse(key.expires_at) <= now)) {
      throw invalidToken('The API key is revoked or expired, or its holder may no longer use it.');
    }
    if (this.#keyUses.peek(key.id, now) === undefined) {
      this.#keyUses.set(key.id, true, now + keyUseIntervalMs);
      // The last use is a hint for people; a failure to write it must not refuse the request.
      await touchApiKey(db, key.id).catch((error: Error) =>
        this.#logger.warn({ err: error.message }, 'could not record an API key’s use'),
      );
    }
    return { actor: keyActor(key), claims: keyClaims(this.#config, key) };
  }

  /** The site and the caller's role there; null when it is not theirs to see. */
  async site(db: CommonQueryMethods, actor: Actor, identifier: string): Promise<SiteAccess | null> {
    const key = `${actorKey(actor)} ${identifier.toLowerCase()}`;
    const found = await this.#cached(this.#sites, key, Date.now(), async () => {
      const access = await findSiteAccess(db, actor, identifier);
      return access && { site: access.site, role: access.role };
    });
    return found && { actor, ...found };
  }

  /** A public site of a tenant in good standing; null otherwise. */
  publicSite(db: CommonQueryMethods, identifier: string): Promise<Site | null> {
    return this.#cached(this.#publicSites, identifier.toLowerCase(), Date.now(), () => findPublicSite(db, identifier));
  }

  /** The public site when it is known here already (no database, no wait); undefined when it is not. */
  knownPublicSite(identifier: string): Site | undefined {
    return this.#publicSites.peek(identifier.toLowerCase(), Date.now());
  }

  close(): void {
    this.#subscription?.close();
    this.#forgetAll();
  }

  /** Answers from the map, or loads and keeps the answer — unless it is null, or a change was heard meanwhile. */
  async #cached<V>(
    map: ExpiringMap<V>,
    key: string,
    now: number,
    load: () => Promise<V | null>,
    expiry?: (value: V) => number,
  ): Promise<V | null> {
    const hit = map.get(key, now);
    if (hit !== undefined) return hit;
    const generation = this.#generation;
    const value = await load();
    if (value !== null && this.enabled && generation === this.#generation) {
      map.set(key, value, Math.min(now + this.#ttlMs, expiry?.(value) ?? Infinity));
    }
    return value;
  }

  #changed(payload: string): void {
    this.#generation++;
    const session = /^session:(.+)$/.exec(payload)?.[1];
    if (session) this.#sessions.deleteStartingWith(sessionKey(session, ''));
    else this.#forgetAll();
  }

  #maps(): [string, ExpiringMap<unknown>][] {
    return [
      ['access:claims', this.#claims],
      ['access:sessions', this.#sessions],
      ['access:accounts', this.#accounts],
      ['access:sites', this.#sites],
      ['access:public-sites', this.#publicSites],
      ['access:api-keys', this.#keys],
    ];
  }

  /** Each of this process's access maps: size, hits, misses, and entries pushed out by the size bound. */
  counts(): CacheFigures[] {
    return this.#maps().map(([name, map]) => ({
      name,
      store: 'memory',
      entries: map.size,
      hits: map.hits,
      misses: map.misses,
      evictions: map.evictions,
    }));
  }

  /** Drops what expired, per map. */
  prune(): { name: string; removed: number }[] {
    const now = Date.now();
    return this.#maps().map(([name, map]) => ({ name, removed: map.prune(now) }));
  }

  #forgetAll(): void {
    this.#generation++;
    for (const map of [this.#claims, this.#sessions, this.#accounts, this.#sites, this.#publicSites, this.#keys])
      map.clear();
  }
}
