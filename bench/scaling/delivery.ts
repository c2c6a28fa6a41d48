// Public delivery behind a CDN, on a database of its own with an API process
// of its own (`npm run api`'s entry point, the local storage driver):
// - every public GET of the manifest asked once on a public site with a page,
//   elements, a post and an image: which answers a shared cache may keep
//   (Cache-Control public, with a validator), and which it may not;
// - what the origin spends on a revalidation (If-None-Match → 304) against a
//   full answer of the same page (both from the API's own cache, as a CDN's
//   revalidations would find it), interleaved rounds, medians.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import sharp from 'sharp';
import { api } from '../http.ts';
import { interleaved, median, rate, ratio } from '../compare.ts';
import { publicPage } from '../content.ts';
import { cpuPerRequest } from '../cpu.ts';
import { benchLimits } from '../limits.ts';
import { load, loadClient } from '../load.ts';
import { withOwnDatabase } from '../own-database.ts';
import type { Server } from './pipeline.ts';

type Row = [string, string];

const root = path.join(import.meta.dirname, '..', '..');

/** `npm run api`'s entry point on DATABASE_URL, on a port of its own; answers once it logged its URL. */
async function startApi(databaseUrl: string, dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(root, 'api', 'main.ts')], {
    env: {
      PATH: process.env.PATH,
      JWT_SECRET: 'x'.repeat(32),
      ADMIN_EMAIL: 'admin@example.com',
      ADMIN_PASSWORD: 'change-me-now',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...benchLimits,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout })) {
    const url = /"url":"(http:\/\/[^"]+)"/.exec(line)?.[1];
    if (url) {
      child.stdout.resume();
      return { url, child };
    }
  }
  throw new Error('the API process ended before it listened');
}

/** One small image uploaded to the site, made ready at once (no worker runs here to process it). */
async function uploadImage(url: string, token: string, slug: string, databaseUrl: string): Promise<string> {
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'square.png');
  const res = await fetch(`${url}/${slug}/media/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    body: form,
  });
  if (!res.ok) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`update media_items set status = 'ready' where id = $1`, [id]);
  await client.end();
  return id;
}

type Answer = { path: string; status: number; cacheControl: string; validator: boolean; surrogateKey: boolean };

/** Whether a shared cache may keep the answer: public (or s-maxage), no no-store or private, a lifetime. */
const shareable = (a: Answer) =>
  a.status === 200 &&
  /\b(public|s-maxage)\b/.test(a.cacheControl) &&
  !/\b(no-store|private|no-cache)\b/.test(a.cacheControl) &&
  /max-age=[1-9]/.test(a.cacheControl);

async function survey(url: string, paths: string[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const target of paths) {
    const res = await fetch(`${url}${target}`, { redirect: 'manual' });
    await res.arrayBuffer();
    answers.push({
      path: target,
      status: res.status,
      cacheControl: res.headers.get('cache-control') ?? '(none)',
      validator: res.headers.has('etag') || res.headers.has('last-modified'),
      surrogateKey: res.headers.has('surrogate-key'),
    });
  }
  return answers;
}

export async function deliveryFigures(server: Server): Promise<Row[]> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-delivery-'));
  chmodSync(dataDir, 0o755);
  try {
    return await withOwnDatabase(server.adminUrl, 'bench_delivery', 4, async (databaseUrl) => {
      const { url, child } = await startApi(databaseUrl, dataDir);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        const login = await fetch(`${url}/auth/login`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now' }),
        });
        if (!login.ok) throw new Error(`login answered ${login.status}: ${await login.text()}`);
        const token = ((await login.json()) as { access_token: string }).access_token;
        const { site, pagePath } = await publicPage(url, token, 'Delivery');
        const s = site.slug;
        const pageId = /pages\/([^?]+)/.exec(pagePath)![1]!;
        const elements = await api<{ items: { id: string }[] }>(`${url}/public/${s}/elements`, token, 'GET');
        const element = elements.items[0]!.id;
        const post = await api<{ id: string; slug: string }>(`${url}/${s}/posts/`, token, 'POST', {
          title: 'A public post',
          body: 'Some text about headings and blocks.',
          status: 'published',
        });
        const media = await uploadImage(url, token, s, databaseUrl);
        const answers = await survey(url, [
          `/public/${s}/locales`,
          `/public/${s}/content-types`,
          `/public/${s}/elements`,
          `/public/${s}/elements/${element}`,
          `/public/${s}/elements/${element}/references`,
          `/public/${s}/navigation`,
          `/public/${s}/pages`,
          `/public/${s}/pages/${pageId}`,
          `/public/${s}/posts`,
          `/public/${s}/posts/${post.slug}`,
          `/public/${s}/media/${media}`,
          `/public/${s}/media/${media}/view`,
          `/${s}/media/${media}/view`,
          `/search/sites/${s}?q=heading`,
          `/search/sites/${s}/suggest?q=head`,
          `/${s}/site-statistics/health`,
        ]);
        const kept = answers.filter(shareable);
        const route = (a: Answer) =>
          a.path
            .replace(`/${s}`, '/{site}')
            .replace(post.slug, '{post}')
            .replace(/[0-9a-f-]{36}/g, '{id}')
            .split('?')[0]!;
        const rows: Row[] = [
          [
            'Public GETs a shared cache may keep (one of each route, a public site)',
            `${kept.length} of ${answers.length}: ${kept
              .map(
                (a) =>
                  a.path
                    .replace(`/${s}`, '/{site}')
                    .replace(/[0-9a-f-]{36}/g, '{id}')
                    .split('?')[0],
              )
              .join(', ')}`,
          ],
          ...answers
            .filter((a) => !shareable(a))
            .map((a): Row => [
              `  not kept: ${
                a.path
                  .replace(`/${s}`, '/{site}')
                  .replace(/[0-9a-f-]{36}/g, '{id}')
                  .split('?')[0]
              }`,
              `${a.status}, Cache-Control: ${a.cacheControl}`,
            ]),
          [
            'Of those kept, with a validator (ETag or Last-Modified) / a Surrogate-Key',
            `${kept.filter((a) => a.validator).length} / ${kept.filter((a) => a.surrogateKey).length}; ` +
              `no validator: ${
                kept
                  .filter((a) => !a.validator)
                  .map(route)
                  .join(', ') || 'none'
              }; ` +
              `no Surrogate-Key: ${
                kept
                  .filter((a) => !a.surrogateKey)
                  .map(route)
                  .join(', ') || 'none'
              }`,
          ],
        ];

        // A full answer against a revalidation of the same page, both from the API's cache.
        const page = await fetch(`${url}${pagePath}`);
        const body = await page.arrayBuffer();
        const etag = page.headers.get('etag')!;
        const check = await fetch(`${url}${pagePath}`, { headers: { 'If-None-Match': etag } });
        if (check.status !== 304) throw new Error(`If-None-Match answered ${check.status}`);
        const loads = await interleaved(
          {
            full: { url: `${url}${pagePath}` },
            revalidation: { url: `${url}${pagePath}`, headers: { 'If-None-Match': etag }, notModified: true },
          },
          5,
          4,
        );
        // API CPU per request: the median of three loads of each, taken in turn.
        const cpuOnce = async (headers: Record<string, string>, notModified: boolean) =>
          (
            await cpuPerRequest(
              { api: () => [child.pid!] },
              () => load(`${url}${pagePath}`, { seconds: 4, headers, notModified }),
              4,
            )
          ).micros.api;
        const cpuSamples = { full: [] as number[], revalidation: [] as number[] };
        for (let round = 0; round < 3; round++) {
          cpuSamples.full.push(await cpuOnce({}, false));
          cpuSamples.revalidation.push(await cpuOnce({ 'If-None-Match': etag }, true));
        }
        const cpu = (samples: number[]) =>
          `${median(samples)} µs/request (${Math.min(...samples)}–${Math.max(...samples)})`;
        rows.push(
          [
            'Public page (10 elements, de-CH), full answer from the API’s cache',
            `${rate(loads.full)}; ${body.byteLength} bytes; API CPU ${cpu(cpuSamples.full)} (${loadClient}, 32 connections, 5 rounds of 4 s)`,
          ],
          [
            'The same page, If-None-Match → 304',
            `${rate(loads.revalidation)}; ${ratio(loads.revalidation, loads.full)} the full answer; 0 bytes; ` +
              `API CPU ${cpu(cpuSamples.revalidation)}`,
          ],
        );
        return rows;
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
