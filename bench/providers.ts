// `npm run bench -- providers`: limits per provider, shared by every worker.
// 200 image jobs against OpenAI's strict fake behind a gate that allows 20
// requests a window and answers the rest 429, as a vendor's rate limit does;
// the platform is told the same limit (OPENAI_REQUESTS_PER_MINUTE=20, the
// window shortened by PROVIDER_LIMIT_WINDOW_MS so the run takes a minute, not
// ten). Figures: how many jobs failed, how many requests the vendor refused,
// the most it was sent in any window, and how many jobs were seen waiting with
// the limit as their stage.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeOpenAI } from '../test/helpers/fakes/openai.ts';
import { api, benchSite } from './http.ts';
import { withOwnDatabase } from './own-database.ts';

/** The bootstrap admin's token on the platform (its local default credentials). */
async function signIn(url: string): Promise<string> {
  const answer = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now' }),
  });
  return ((await answer.json()) as { access_token: string }).access_token;
}

type JobBody = { id: string; status: string; stage: string | null; error: { code: string; message: string } | null };

const jobs = 200;
const perWindow = 20;
const windowMs = 3000;

/** A gate in front of the fake: `perWindow` requests a window pass, the rest are OpenAI's 429. */
async function gate(target: string) {
  const sent: number[] = [];
  let refused = 0;
  const server = http.createServer((req, res) => {
    const now = Date.now();
    const recent = sent.filter((at) => at > now - windowMs).length;
    if (recent >= perWindow) {
      refused++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(Math.ceil(windowMs / 1000)) });
      res.end(
        JSON.stringify({
          error: {
            message: 'Rate limit reached for requests',
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        }),
      );
      return;
    }
    sent.push(now);
    const forward = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const mostInAWindow = () =>
    Math.max(0, ...sent.map((start) => sent.filter((at) => at >= start && at < start + windowMs).length));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ sent: sent.length, refused, mostInAWindow: mostInAWindow() }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Start = (env: Record<string, string>) => Promise<{ url: string; stop: () => Promise<unknown> }>;

/** On a database of its own, so that the bench's own `npm start` worker (configured with no provider) takes none of its jobs. */
export const providerLimitFigures = (adminUrl: string, start: Start) =>
  withOwnDatabase(adminUrl, 'providers', 8, (databaseUrl) => limitFigures(databaseUrl, start));

async function limitFigures(databaseUrl: string, start: Start): Promise<[string, string][]> {
  const fake = await startFakeOpenAI();
  const gated = await gate(new URL(fake.url).origin);
  const platform = await start({
    DATABASE_URL: databaseUrl,
    IMAGE_PROVIDERS: 'openai',
    OPENAI_BASE_URL: `${gated.url}/v1`,
    OPENAI_API_KEY: fake.apiKey,
    OPENAI_REQUESTS_PER_MINUTE: String(perWindow),
    PROVIDER_LIMIT_WINDOW_MS: String(windowMs),
    WORKER_CONCURRENCY: '8',
    JOB_TENANT_CONCURRENCY: '8',
  });
  try {
    const token = await signIn(platform.url);
    const site = await benchSite(platform.url, token, 'Providers bench', 1_000_000);
    const began = performance.now();
    const submitted = await Promise.all(
      Array.from({ length: jobs }, (_, i) =>
        api<JobBody>(`${platform.url}/${site.slug}/media/generate`, token, 'POST', {
          prompt: `A harbour at dusk, number ${i}`,
          size: '1024x1024',
        }),
      ),
    );
    const seenWaiting = new Set<string>();
    const ended = new Map<string, string>();
    while (ended.size < jobs) {
      for (const job of submitted) {
        if (ended.has(job.id)) continue;
        const now = await api<JobBody>(`${platform.url}/${site.slug}/jobs/${job.id}`, token, 'GET');
        if (now.stage?.includes('limit')) seenWaiting.add(job.id);
        if (['succeeded', 'failed', 'canceled'].includes(now.status))
          ended.set(
            job.id,
            now.status === 'succeeded' ? 'succeeded' : `${now.status}: ${now.error?.code} ${now.error?.message}`,
          );
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const seconds = (performance.now() - began) / 1000;
    const failures = [...ended.values()].filter((status) => status !== 'succeeded');
    const failed = failures.length;
    const why = [...new Set(failures)].slice(0, 3).join('; ');
    const stats = gated.stats();
    return [
      [
        `Provider limit: ${jobs} image jobs, vendor allows ${perWindow} per ${windowMs / 1000} s, failed`,
        `${failed} of ${jobs}${why ? ` (${why})` : ''}`,
      ],
      ['Provider limit: requests the vendor refused (429) / sent in all', `${stats.refused} / ${stats.sent}`],
      ['Provider limit: most requests in any window (the limit is 20)', `${stats.mostInAWindow}`],
      ['Provider limit: jobs seen waiting with the limit as their stage', `${seenWaiting.size} of ${jobs}`],
      [
        'Provider limit: all done in',
        `${seconds.toFixed(1)} s (the limit alone needs ${((jobs / perWindow) * windowMs) / 1000 - windowMs / 1000} s)`,
      ],
    ];
  } finally {
    await platform.stop();
    await gated.close();
    await fake.close();
  }
}
