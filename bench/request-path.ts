// Request-path figures for npm run bench: the API's cheapest route, its
// authenticated and public single-row reads, and who-am-I, each loaded at 32
// connections beside bare Express (hello) and bare Express + node-postgres
// (one row by primary key) started here, in the same run, against the same
// database. Also how many database round trips each read costs with warm
// caches, counted on the wire; and how soon a logout made through one API
// process is honoured by another.
import { startRoundTripCounter, type RoundTripCounter } from '../test/helpers/pg-round-trips.ts';
import { api, benchSite } from './http.ts';
import { interleaved, rate, ratio, startBaseline, stopBaseline } from './compare.ts';
import { loadClient } from './load.ts';

type Row = [string, string];

/** A small PNG, uploaded to a public site and waited for until processed. */
async function readyItem(url: string, token: string): Promise<{ site: string; id: string }> {
  const { default: sharp } = await import('sharp');
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 80, b: 40 } } })
    .png()
    .toBuffer();
  const site = await benchSite(url, token, 'Read bench');
  await api(`${url}/sites/${site.slug}`, token, 'PATCH', { visibility: 'public' });
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'bench.png');
  const res = await fetch(`${url}/${site.slug}/media/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  for (let i = 0; i < 300; i++) {
    const item = await api<{ status: string }>(`${url}/${site.slug}/media/${id}`, token, 'GET');
    if (item.status === 'ready') return { site: site.slug, id };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the bench image was not processed within 30 s');
}

/** Database round trips per request, after `warm` requests, averaged over `count` sequential ones. */
async function roundTrips(
  counter: RoundTripCounter,
  url: string,
  headers: Record<string, string> = {},
  warm = 5,
  count = 100,
): Promise<number> {
  const get = async () => {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  };
  for (let i = 0; i < warm; i++) await get();
  counter.reset();
  for (let i = 0; i < count; i++) await get();
  return counter.count() / count;
}

/**
 * How long after a logout answered by one API process another still accepts
 * the session's token: each trial signs in, warms the second process's cache
 * with the token, logs out through the first, then asks the second until it
 * answers 401. Also how many of those asks were still answered 200.
 */
async function invalidationDelay(
  first: string,
  second: string,
  trials = 20,
): Promise<{ p50: number; max: number; stale: number }> {
  const delays: number[] = [];
  let stale = 0;
  const currentUser = (token: string) =>
    fetch(`${second}/auth/currentuser`, { headers: { Authorization: `Bearer ${token}` } }).then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    });
  for (let i = 0; i < trials; i++) {
    const { access_token: token } = await api<{ access_token: string }>(`${first}/auth/login`, '', 'POST', {
      username: 'admin@example.com',
      password: 'change-me-now',
    });
    for (let warm = 0; warm < 3; warm++) if ((await currentUser(token)) !== 200) throw new Error('token refused');
    const logout = await fetch(`${first}/auth/logout`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    if (logout.status !== 204) throw new Error(`logout answered ${logout.status}`);
    const loggedOut = performance.now();
    for (;;) {
      const status = await currentUser(token);
      if (status === 401) break;
      if (status !== 200) throw new Error(`currentuser answered ${status}`);
      stale++;
      if (performance.now() - loggedOut > 10_000) throw new Error('the second process kept the session for 10 s');
    }
    delays.push(performance.now() - loggedOut);
  }
  delays.sort((a, b) => a - b);
  return { p50: delays[Math.floor(delays.length / 2)]!, max: delays.at(-1)!, stale };
}

const ROUNDS = 3;
const SECONDS = 5;

export type ApiLauncher = (
  databaseUrl: string,
  env?: Record<string, string>,
) => Promise<{ url: string; pid: number; stop(): Promise<void> }>;

export async function requestPathFigures(
  apiUrl: string,
  token: string,
  databaseUrl: string,
  launchApi: ApiLauncher,
): Promise<Row[]> {
  const { site, id } = await readyItem(apiUrl, token);
  const bearer = { Authorization: `Bearer ${token}` };
  const hello = await startBaseline('express-hello.ts', {});
  const withPg = await startBaseline('express-pg.ts', { DATABASE_URL: databaseUrl });
  try {
    const loads = await interleaved(
      {
        hello: { url: `${hello.url}/` },
        pg: { url: `${withPg.url}/media/${id}` },
        live: { url: `${apiUrl}/health/live` },
        read: { url: `${apiUrl}/${site}/media/${id}`, headers: bearer },
        publicRead: { url: `${apiUrl}/public/${site}/media/${id}` },
        me: { url: `${apiUrl}/auth/currentuser`, headers: bearer },
      },
      ROUNDS,
      SECONDS,
    );
    const { hello: helloLoad, pg: pgLoad, live, read, publicRead, me } = loads;
    // Counted on a second API process and baseline whose database connections go through a counting relay.
    const counter = await startRoundTripCounter(databaseUrl);
    const countedApi = await launchApi(counter.url);
    const countedPg = await startBaseline('express-pg.ts', { DATABASE_URL: counter.url });
    const trips = {
      read: await roundTrips(counter, `${countedApi.url}/${site}/media/${id}`, bearer),
      publicRead: await roundTrips(counter, `${countedApi.url}/public/${site}/media/${id}`),
      me: await roundTrips(counter, `${countedApi.url}/auth/currentuser`, bearer),
      baseline: await roundTrips(counter, `${countedPg.url}/media/${id}`),
    };
    await Promise.all([countedApi.stop(), stopBaseline(countedPg)]);
    await counter.close();
    const secondApi = await launchApi(databaseUrl);
    const invalidation = await invalidationDelay(apiUrl, secondApi.url).finally(() => secondApi.stop());
    const perRequest = (n: number) => n.toFixed(2);
    return [
      [
        `Load client (32 connections; ${ROUNDS} interleaved rounds of ${SECONDS} s after one unrecorded warm-up round; medians)`,
        loadClient,
      ],
      ['Bare Express: hello', rate(helloLoad)],
      ['Bare Express + pg: one row by primary key', rate(pgLoad)],
      ['GET /health/live', `${rate(live)}; ${ratio(live, helloLoad)} Express hello`],
      ['GET /{site}/media/{id} (bearer)', `${rate(read)}; ${ratio(read, pgLoad)} Express + pg`],
      ['GET /public/{site}/media/{id}', `${rate(publicRead)}; ${ratio(publicRead, pgLoad)} Express + pg`],
      ['GET /auth/currentuser (bearer)', `${rate(me)}; ${ratio(me, pgLoad)} Express + pg`],
      [
        'Database round trips per request: media (bearer) / public media / currentuser / Express + pg',
        `${perRequest(trips.read)} / ${perRequest(trips.publicRead)} / ${perRequest(trips.me)} / ${perRequest(trips.baseline)}`,
      ],
      [
        'Logout through one API process → the other refuses the token (its cache warm), 20 trials',
        `p50 ${invalidation.p50.toFixed(2)} ms, max ${invalidation.max.toFixed(2)} ms after the logout answered; ${invalidation.stale} request(s) still accepted`,
      ],
    ];
  } finally {
    await Promise.all([stopBaseline(hello), stopBaseline(withPg)]);
  }
}
