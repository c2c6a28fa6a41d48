// The one way to fetch a URL a user gave us (importing an article or an image,
// re-crawling a page). Such a URL must not become a way into our own network
// (SSRF), so: http and https only; every address the host resolves to is
// checked, at connect time, in the lookup the socket itself uses, so that a
// second DNS answer (rebinding) cannot swap a public address for a private
// one; redirects are followed by hand and each one checked from scratch; and
// the size and duration of the whole exchange are capped. Outbound job
// webhooks POST through it too, with redirects answered rather than followed.
import dns from 'node:dns';
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addAbortSignal } from 'node:stream';
import { Problem, problemType } from '../errors.ts';
import { isAllowedAddress } from './addresses.ts';

export const defaultMaxBytes = 5 * 1024 * 1024;
export const defaultTimeoutMs = 15_000;
const maxRedirects = 5;
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** How a host name becomes addresses; tests inject one so that no test needs a DNS server. */
export type Resolve = (hostname: string) => Promise<dns.LookupAddress[]>;

export type SafeFetchOptions = {
  /** Extra request headers (If-None-Match, Accept...). They go to every hop, so never credentials. */
  headers?: Record<string, string>;
  /** POST this body instead of a GET (a webhook delivery). */
  post?: { body: string; contentType: string };
  /** `manual`: a redirect is the result, not followed (a POST is not sent on to where a redirect points). */
  redirect?: 'follow' | 'manual';
  /** false: only the status and headers matter; the body is left unread (and `body` is empty). */
  readBody?: boolean;
  /** Cap on the body; a larger one, announced or not, fails. */
  maxBytes?: number;
  /** Cap on the whole fetch, redirects and a slowly sent body included. */
  timeoutMs?: number;
  /** The caller's cancellation (a canceled job): its reason is thrown as is. */
  signal?: AbortSignal;
  /** For tests and benches only: lets servers on 127.0.0.1 be reached. Allows loopback and nothing else. */
  allowLoopback?: boolean;
  resolve?: Resolve;
};

export type SafeFetchResult = {
  /** The URL finally answered, after redirects. */
  url: string;
  /** Any status but a followed redirect: 304 (no body) and 4xx/5xx are results too, for the caller to judge. */
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The media type of Content-Type, lower-cased and without parameters (the full header is in `headers`). */
  contentType: string | null;
};

/** Why a fetch failed, as problem types: `code` is stable, for jobs to record. */
const failures = {
  'url-not-allowed': [422, 'URL not allowed'],
  'address-not-allowed': [422, 'Address not allowed'],
  'too-many-redirects': [502, 'Too many redirects'],
  'response-too-large': [413, 'Response too large'],
  'fetch-timeout': [504, 'Fetch timed out'],
  'fetch-failed': [502, 'Fetch failed'],
} as const;
export type SafeFetchCode = keyof typeof failures;

export class SafeFetchError extends Problem {
  override name = 'SafeFetchError';
  readonly code: SafeFetchCode;

  constructor(code: SafeFetchCode, detail: string, cause?: unknown) {
    const [status, title] = failures[code];
    super(status, detail, { type: problemType(code), title });
    this.code = code;
    if (cause !== undefined) this.cause = cause;
  }
}

// Which address was refused stays out of the message: it is shown to the user,
// and naming what an internal host name resolves to would map our network.
const addressRefused = () =>
  new SafeFetchError('address-not-allowed', 'The URL leads to a private, local or reserved address.');

/** An http(s) URL whose host, if written as an IP address, is allowed; the host names are checked on connecting. */
function checkedUrl(input: string | URL, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(input);
  } catch (error) {
    throw new SafeFetchError('url-not-allowed', 'The URL is not valid.', error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new SafeFetchError('url-not-allowed', 'Only http and https URLs can be fetched.');
  // The socket does not look up an IP address, so the lookup below never sees it. The URL
  // parser has already turned 2130706433, 0177.0.0.1 and 0x7f.1 into 127.0.0.1.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) && !isAllowedAddress(host, { allowLoopback })) throw addressRefused();
  return url;
}

/** The lookup the socket calls: resolves the name and answers only if every address is allowed. */
function checkedLookup(resolve: Resolve, allowLoopback: boolean): LookupFunction {
  const addressesOf = async (hostname: string) => {
    const addresses = await resolve(hostname);
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' });
    // All of them, not only the first: the socket may try each in turn.
    if (!addresses.every(({ address }) => isAllowedAddress(address, { allowLoopback }))) throw addressRefused();
    return addresses;
  };
  return (hostname, options, callback) => {
    addressesOf(hostname).then(
      (addresses) =>
        options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family),
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

const resolveAll: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true });

function send(url: URL, options: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const allowLoopback = options.allowLoopback === true;
  const { post } = options;
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: post ? 'POST' : 'GET',
        headers: post
          ? {
              ...options.headers,
              'Content-Type': post.contentType,
              'Content-Length': String(Buffer.byteLength(post.body)),
            }
          : (options.headers ?? {}),
        signal,
        lookup: checkedLookup(options.resolve ?? resolveAll, allowLoopback),
        // No pooled sockets: a kept-alive one would skip the lookup, and may have been
        // opened by a fetch with other rules (allowLoopback).
        agent: false,
      },
      resolve,
    );
    request.on('error', reject);
    request.end(post?.body);
  });
}

async function readBody(response: IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new SafeFetchError('response-too-large', `The response is larger than ${maxBytes} bytes.`);
  // A 304's Content-Length describes the representation it did not send.
  if (response.statusCode !== 304 && Number(response.headers['content-length']) > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  // The time limit covers a body that trickles in, not only the wait for headers.
  addAbortSignal(signal, response);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(); // leaving the loop destroys the response
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** GET (or POST to) a user-given URL under the rules above. Failures are SafeFetchErrors, except the caller's own abort. */
export async function safeFetch(input: string | URL, options: SafeFetchOptions = {}): Promise<SafeFetchResult> {
  const allowLoopback = options.allowLoopback === true;
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    let url = checkedUrl(input, allowLoopback);
    for (let redirects = 0; ; redirects++) {
      const response = await send(url, options, signal);
      const status = response.statusCode ?? 0;
      const follow = options.redirect !== 'manual' && redirectStatuses.has(status);
      const location = follow ? response.headers.location : undefined;
      if (location === undefined) {
        let body: Buffer = Buffer.alloc(0);
        if (options.readBody === false) response.destroy();
        else body = await readBody(response, options.maxBytes ?? defaultMaxBytes, signal);
        const contentType = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || null;
        return { url: url.href, status, headers: response.headers, body, contentType };
      }
      response.destroy();
      if (redirects === maxRedirects)
        throw new SafeFetchError('too-many-redirects', `The URL redirects more than ${maxRedirects} times.`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch (error) {
        throw new SafeFetchError('url-not-allowed', 'The URL redirects to an invalid URL.', error);
      }
      url = checkedUrl(next, allowLoopback);
    }
  } catch (error) {
    if (error instanceof SafeFetchError) throw error;
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout.aborted) throw new SafeFetchError('fetch-timeout', `The URL did not answer within ${timeoutMs} ms.`);
    const code = (error as { code?: string }).code;
    throw new SafeFetchError('fetch-failed', `The URL could not be fetched${code ? ` (${code})` : ''}.`, error);
  }
}
