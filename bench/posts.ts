// Post import figures for npm run bench: a from-url import of a 200 KB page,
// end to end — submitted with Prefer: wait, answered once the job has
// fetched the page (from a server on 127.0.0.1, which the bench's own
// `npm start` may reach: it runs with FETCH_ALLOW_LOOPBACK=true, the bench
// only), extracted the article and written the post. Sequential imports, so
// each figure is one import's latency, not a queue's.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, benchSite } from './http.ts';

type Row = [string, string];

/** About `bytes` of HTML: an article among navigation, scripts and a footer, as a news page is. */
function page(bytes: number, n: number): string {
  const chrome =
    '<nav>' +
    Array.from({ length: 60 }, (_, i) => `<a href="/section/${i}">Section ${i}</a>`).join(' ') +
    '</nav>' +
    `<script>${'window.analytics = window.analytics || [];'.repeat(40)}</script>`;
  const paragraph = (i: number) =>
    `<p>Paragraph ${i} of import ${n}: the harbour board met on Tuesday to discuss the new pier, the ferry timetable ` +
    `and the lighthouse, whose lamp was replaced in spring. Residents asked about parking, noise at night and the ` +
    `café that opened by the water; the board promised answers by the next meeting, in writing, to every household.</p>`;
  let body = '';
  // Head, title and footer are about 2 KB.
  for (let i = 1; chrome.length + body.length + 2048 < bytes; i++) body += paragraph(i);
  return `<!doctype html><html lang="en"><head><title>Harbour board meeting ${n}</title>
<meta property="article:published_time" content="2026-03-01T10:00:00Z"></head><body>${chrome}
<article><h1>Harbour board meeting ${n}</h1><p class="byline">By Bench Writer</p>${body}</article>
<footer>${'Footer links. '.repeat(100)}</footer></body></html>`;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

export async function postImportFigures(url: string, token: string): Promise<Row[]> {
  const site = await benchSite(url, token, 'Bench posts', 1_000_000);
  let size = 0;
  const server = http.createServer((req, res) => {
    const html = page(200 * 1024, Number(/\d+/.exec(req.url ?? '')?.[0] ?? 0));
    size = Buffer.byteLength(html);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pages = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  type Job = { status: string; error: unknown; output: { post_id?: string } | null };
  const importOnce = async (n: number) => {
    const began = performance.now();
    const job = await api<Job>(
      `${url}/${site.slug}/posts/from-url`,
      token,
      'POST',
      { url: `${pages}/article-${n}` },
      {
        Prefer: 'wait=30',
      },
    );
    const ms = performance.now() - began;
    if (job.status !== 'succeeded' || !job.output?.post_id)
      throw new Error(`from-url import ended ${job.status}: ${JSON.stringify(job.error)}`);
    return ms;
  };
  try {
    for (let n = 0; n < 3; n++) await importOnce(n); // warm: modules loaded, JIT settled
    const samples: number[] = [];
    for (let n = 3; n < 23; n++) samples.push(await importOnce(n));
    samples.sort((a, b) => a - b);
    return [
      [
        `POST /{site}/posts/from-url, ${(size / 1024).toFixed(0)} KB page, submit (Prefer: wait) → post created: p50 / max of 20`,
        `${quantile(samples, 0.5).toFixed(0)} / ${samples.at(-1)!.toFixed(0)} ms (target ≤ 1000 ms)`,
      ],
    ];
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
