// Web pages served on 127.0.0.1 for the import tests: each path answers what
// the test put there (status, headers, body), conditionally when it has an
// ETag (304 on a matching If-None-Match), or redirects. Every request is
// recorded, so a test can tell whether the importer came at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Page =
  | { body: string | Buffer; type?: string; status?: number; etag?: string; lastModified?: string }
  | { redirect: string; status?: number };

export type PageServer = {
  url: string;
  pages: Map<string, Page>;
  requests: { path: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
};

export async function startPageServer(): Promise<PageServer> {
  const pages = new Map<string, Page>();
  const requests: PageServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers });
    const page = pages.get(path);
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
      return;
    }
    if ('redirect' in page) {
      res.writeHead(page.status ?? 302, { location: page.redirect }).end();
      return;
    }
    const headers: Record<string, string> = { 'content-type': page.type ?? 'text/html; charset=utf-8' };
    if (page.etag) headers.etag = page.etag;
    if (page.lastModified) headers['last-modified'] = page.lastModified;
    if (page.etag && req.headers['if-none-match'] === page.etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(page.status ?? 200, headers).end(page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An article page: a title, a byline, paragraphs, and the metadata importers read. */
export function articlePage(options: {
  title: string;
  paragraphs: string[];
  lang?: string;
  byline?: string;
  published?: string;
  image?: string;
}): string {
  const meta = [
    options.published ? `<meta property="article:published_time" content="${options.published}">` : '',
    options.image ? `<meta property="og:image" content="${options.image}">` : '',
  ].join('');
  return `<!doctype html><html lang="${options.lang ?? 'en'}"><head><title>${options.title}</title>${meta}
<script>window.ran = true</script></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>${options.title}</h1>${options.byline ? `<p class="byline">By ${options.byline}</p>` : ''}
${options.paragraphs.map((text) => `<p>${text}</p>`).join('\n')}</article><footer>© Test</footer></body></html>`;
}

/** A paragraph long enough for Readability to take it as article text. */
export const paragraph = (topic: string, n = 1) =>
  `${n}. The ${topic} is described here in enough words that a reader, and Readability, take it for the body of an article rather than navigation.`;
