// The fetcher for user-given URLs must never reach into our own network: not
// directly, not through an IP written oddly, a host name, or a redirect; and it
// must not be held up or filled up by the server at the other end. The server
// here is a small one on 127.0.0.1, reached only with allowLoopback; host names
// resolve through an injected resolver, so nothing leaves the machine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAllowedAddress } from '../../core/net/addresses.ts';
import { type SafeFetchCode, safeFetch, SafeFetchError } from '../../core/net/safe-fetch.ts';

let server: http.Server;
let origin: string;
let port: number;

// Routes: /page, /redirect?to=, /hops/<n> (n redirects, then a page), /loop,
// /big (with Content-Length), /big-chunked (without), /etag, /echo, /slow-headers, /slow-body.
function handle(request: http.IncomingMessage, response: http.ServerResponse) {
  const url = new URL(request.url!, origin);
  const hops = /^\/hops\/(\d+)$/.exec(url.pathname);
  if (hops) {
    const left = Number(hops[1]);
    if (left === 0) return response.end('arrived');
    return response.writeHead(302, { location: `/hops/${left - 1}` }).end();
  }
  switch (url.pathname) {
    case '/page':
      return response.writeHead(200, { 'content-type': 'text/html; charset=UTF-8' }).end('<p>hello</p>');
    case '/redirect':
      return response.writeHead(302, { location: url.searchParams.get('to')! }).end();
    case '/loop':
      return response.writeHead(301, { location: '/loop' }).end();
    case '/big':
      return response.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000));
    case '/big-chunked':
      for (let i = 0; i < 5; i++) response.write('x'.repeat(1000));
      return response.end();
    case '/etag':
      // A 304 may announce the length of the representation it does not send.
      if (request.headers['if-none-match'] === '"v1"')
        return response.writeHead(304, { etag: '"v1"', 'content-length': '999999999' }).end();
      return response.writeHead(200, { etag: '"v1"', 'content-type': 'text/plain' }).end('version 1');
    case '/echo': {
      // Answers what was sent, for the POST a webhook makes.
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () =>
        response.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            method: request.method,
            type: request.headers['content-type'],
            length: request.headers['content-length'],
            signed: request.headers['webhook-id'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        ),
      );
      return;
    }
    case '/slow-headers':
      return; // never answers
    case '/slow-body':
      response.writeHead(200, { 'content-type': 'text/plain' });
      return response.write('the start, and then nothing');
  }
  response.writeHead(404).end();
}

beforeAll(async () => {
  server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { allowLoopback: true } as const;

async function failure(promise: Promise<unknown>): Promise<SafeFetchError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SafeFetchError);
  return error as SafeFetchError;
}

async function expectRefused(promise: Promise<unknown>, code: SafeFetchCode) {
  expect((await failure(promise)).code).toBe(code);
}

describe('isAllowedAddress', () => {
  it.each([
    // public
    ['93.184.216.34', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true], // mapped: its IPv4 is public
    ['64:ff9b::808:808', true], // NAT64 of 8.8.8.8
    // edges of the ranges, just outside
    ['9.255.255.255', true],
    ['11.0.0.0', true],
    ['100.63.255.255', true],
    ['100.128.0.0', true],
    ['172.15.255.255', true],
    ['172.32.0.0', true],
    ['192.167.255.255', true],
    ['192.169.0.0', true],
    ['198.17.255.255', true],
    ['198.20.0.0', true],
    ['223.255.255.255', true],
    // IPv4, refused
    ['0.0.0.0', false],
    ['0.1.2.3', false],
    ['127.0.0.1', false],
    ['127.255.255.254', false],
    ['10.0.0.1', false],
    ['10.255.255.255', false],
    ['172.16.0.0', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false], // cloud metadata
    ['100.64.0.1', false],
    ['100.127.255.255', false],
    ['224.0.0.1', false],
    ['239.255.255.250', false],
    ['240.0.0.1', false],
    ['255.255.255.255', false],
    ['192.0.0.8', false],
    ['192.0.2.1', false],
    ['198.18.0.1', false],
    ['198.19.255.255', false],
    ['198.51.100.7', false],
    ['203.0.113.9', false],
    // IPv6, refused
    ['::1', false],
    ['::', false],
    ['::7f00:1', false], // IPv4-compatible 127.0.0.1
    ['fe80::1', false],
    ['fe80::1%eth0', false], // with a zone
    ['febf:ffff::1', false],
    ['fec0::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    ['100::1', false],
    ['64:ff9b:1::a00:1', false],
    // carrying a refused IPv4
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:169.254.169.254', false],
    ['64:ff9b::a00:1', false], // NAT64 of 10.0.0.1
    ['64:ff9b::7f00:1', false], // NAT64 of 127.0.0.1
    // not addresses
    ['localhost', false],
    ['', false],
    ['0177.0.0.1', false],
  ])('%s → %s', (address, allowed) => {
    expect(isAllowedAddress(address)).toBe(allowed);
  });

  it('with allowLoopback, allows loopback and nothing else', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(isAllowedAddress(address, local)).toBe(true);
    for (const address of ['0.0.0.0', '::', '10.0.0.1', '192.168.0.1', '169.254.169.254', 'fe80::1', '::ffff:10.0.0.1'])
      expect(isAllowedAddress(address, local)).toBe(false);
  });
});

describe('safeFetch', () => {
  it('refuses a server on 127.0.0.1 by default', async () => {
    const error = await failure(safeFetch(`${origin}/page`));
    expect(error).toMatchObject({ code: 'address-not-allowed', status: 422, type: '/problems/address-not-allowed' });
  });

  it('fetches it with allowLoopback: final URL, status, headers, body and media type', async () => {
    const result = await safeFetch(`${origin}/page`, local);
    expect(result).toMatchObject({ url: `${origin}/page`, status: 200, contentType: 'text/html' });
    expect(result.headers['content-type']).toBe('text/html; charset=UTF-8');
    expect(result.body.toString()).toBe('<p>hello</p>');
  });

  it('answers other statuses as results, for the caller to judge', async () => {
    const result = await safeFetch(`${origin}/missing`, local);
    expect(result).toMatchObject({ status: 404, contentType: null });
  });

  it.each([
    'ftp://example.com/file',
    'file:///etc/passwd',
    'data:text/plain,hello',
    'javascript:alert(1)',
    'not a url',
  ])('refuses %s', async (url) => {
    await expectRefused(safeFetch(url, local), 'url-not-allowed');
  });

  it.each([
    'http://2130706433/', // decimal
    'http://0177.0.0.1/', // octal
    'http://0x7f.0.0.1/', // hex
    'http://127.1/', // short
    'http://[::ffff:127.0.0.1]/', // IPv4-mapped
    'http://[::1]/',
    'http://[64:ff9b::127.0.0.1]/', // NAT64
  ])('refuses the loopback address written as %s', async (url) => {
    await expectRefused(safeFetch(url), 'address-not-allowed');
  });

  it.each(['http://167772161/', 'http://0xa.0.0.1/', 'http://[::ffff:10.0.0.1]/', 'http://169.254.169.254/latest/'])(
    'refuses the private address written as %s even with allowLoopback',
    async (url) => {
      await expectRefused(safeFetch(url, local), 'address-not-allowed');
    },
  );

  it('reaches the server through a decimal 127.0.0.1 with allowLoopback: the forms are one address', async () => {
    const result = await safeFetch(`http://2130706433:${port}/page`, local);
    expect(result.body.toString()).toBe('<p>hello</p>');
  });

  describe('a host name', () => {
    const resolver =
      (answers: Record<string, string[]>) =>
      async (hostname: string): Promise<{ address: string; family: number }[]> =>
        (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

    it('is refused when it resolves to a private address', async () => {
      const resolve = resolver({ 'intranet.example': ['10.1.2.3'] });
      await expectRefused(safeFetch('http://intranet.example/', { ...local, resolve }), 'address-not-allowed');
    });

    it('is refused when any one of its addresses is private', async () => {
      const resolve = resolver({ 'mixed.example': ['93.184.216.34', '2606:4700::1', 'fd00::1'] });
      await expectRefused(safeFetch('https://mixed.example/', { resolve }), 'address-not-allowed');
    });

    it('is connected to at the address that was checked', async () => {
      const resolve = resolver({ 'site.example': ['127.0.0.1'] });
      await expectRefused(safeFetch(`http://site.example:${port}/page`, { resolve }), 'address-not-allowed');
      const result = await safeFetch(`http://site.example:${port}/page`, { ...local, resolve });
      expect(result).toMatchObject({ url: `http://site.example:${port}/page`, status: 200 });
    });

    it('is checked again after a redirect, with a fresh answer', async () => {
      // A rebinding name: first the allowed server, then an intranet address.
      let calls = 0;
      const resolve = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.7', family: 4 }];
      const start = `http://rebind.example:${port}/redirect?to=${encodeURIComponent(`http://rebind.example:${port}/page`)}`;
      await expectRefused(safeFetch(start, { ...local, resolve }), 'address-not-allowed');
      expect(calls).toBe(2);
    });

    it('that does not resolve fails as a fetch failure', async () => {
      const error = await failure(safeFetch('http://nowhere.example/', { resolve: resolver({}) }));
      expect(error).toMatchObject({ code: 'fetch-failed', status: 502 });
    });
  });

  describe('redirects', () => {
    const redirect = (to: string) => `${origin}/redirect?to=${encodeURIComponent(to)}`;

    it('are followed, and the final URL is reported', async () => {
      const result = await safeFetch(redirect('/page'), local);
      expect(result).toMatchObject({ url: `${origin}/page`, status: 200 });
    });

    it.each(['http://10.0.0.1/', 'http://192.168.1.1/admin', 'http://[::ffff:192.168.0.1]/', 'http://[fd00::1]/'])(
      'to %s are refused even with allowLoopback',
      async (to) => {
        await expectRefused(safeFetch(redirect(to), local), 'address-not-allowed');
      },
    );

    it.each(['file:///etc/passwd', 'ftp://example.com/', 'gopher://127.0.0.1:6379/'])(
      'to %s are refused',
      async (to) => {
        await expectRefused(safeFetch(redirect(to), local), 'url-not-allowed');
      },
    );

    it('are followed five times, not six', async () => {
      const result = await safeFetch(`${origin}/hops/5`, local);
      expect(result).toMatchObject({ url: `${origin}/hops/0`, status: 200 });
      const error = await failure(safeFetch(`${origin}/hops/6`, local));
      expect(error).toMatchObject({ code: 'too-many-redirects', status: 502 });
    });

    it('in a loop end at the limit', async () => {
      await expectRefused(safeFetch(`${origin}/loop`, local), 'too-many-redirects');
    });
  });

  describe('limits', () => {
    it('refuse a body over the cap that its Content-Length announces', async () => {
      const error = await failure(safeFetch(`${origin}/big`, { ...local, maxBytes: 4999 }));
      expect(error).toMatchObject({ code: 'response-too-large', status: 413 });
      expect((await safeFetch(`${origin}/big`, { ...local, maxBytes: 5000 })).body).toHaveLength(5000);
    });

    it('refuse a body over the cap sent without a length', async () => {
      await expectRefused(safeFetch(`${origin}/big-chunked`, { ...local, maxBytes: 2500 }), 'response-too-large');
      expect((await safeFetch(`${origin}/big-chunked`, { ...local, maxBytes: 5000 })).body).toHaveLength(5000);
    });

    it('time out a server that does not answer', async () => {
      const error = await failure(safeFetch(`${origin}/slow-headers`, { ...local, timeoutMs: 200 }));
      expect(error).toMatchObject({ code: 'fetch-timeout', status: 504 });
    });

    it('time out a body that stops coming', async () => {
      await expectRefused(safeFetch(`${origin}/slow-body`, { ...local, timeoutMs: 200 }), 'fetch-timeout');
    });

    it("end at the caller's abort, with the caller's reason", async () => {
      const controller = new AbortController();
      const reason = new Error('job canceled');
      setTimeout(() => controller.abort(reason), 50);
      await expect(safeFetch(`${origin}/slow-body`, { ...local, signal: controller.signal })).rejects.toBe(reason);
    });
  });

  describe('a POST (a webhook delivery)', () => {
    const post = { body: '{"type":"job.completed"}', contentType: 'application/json' };

    it('sends the body with its type and length, and the headers given', async () => {
      const result = await safeFetch(`${origin}/echo`, { ...local, post, headers: { 'webhook-id': 'msg_1' } });
      expect(result.status).toBe(201);
      expect(JSON.parse(result.body.toString('utf8'))).toEqual({
        method: 'POST',
        type: 'application/json',
        length: String(post.body.length),
        signed: 'msg_1',
        body: post.body,
      });
    });

    it('with redirect: manual, answers a redirect as the result, not sent on', async () => {
      const result = await safeFetch(`${origin}/redirect?to=/echo`, { ...local, post, redirect: 'manual' });
      expect(result).toMatchObject({ status: 302, url: `${origin}/redirect?to=/echo` });
    });

    it('with readBody: false, answers the status and leaves the body unread, however large', async () => {
      const result = await safeFetch(`${origin}/big-chunked`, { ...local, maxBytes: 10, readBody: false });
      expect(result.status).toBe(200);
      expect(result.body).toHaveLength(0);
    });
  });

  it('answers 304 to a conditional request as a result without a body', async () => {
    const first = await safeFetch(`${origin}/etag`, local);
    expect(first).toMatchObject({ status: 200, headers: { etag: '"v1"' } });
    const again = await safeFetch(`${origin}/etag`, {
      ...local,
      headers: { 'if-none-match': first.headers.etag! },
      maxBytes: 1000,
    });
    expect(again).toMatchObject({ status: 304, contentType: null });
    expect(again.body).toHaveLength(0);
  });

  it('fails as a fetch failure when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port: closedPort } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(safeFetch(`http://127.0.0.1:${closedPort}/`, local));
    expect(error).toMatchObject({ code: 'fetch-failed', status: 502 });
    expect(error.message).toContain('ECONNREFUSED');
  });
});
