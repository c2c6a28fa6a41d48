// The request path's first steps (./app.ts) run on Node's own request and
// response, before Express takes the request over, if it does at all: an
// answer kept in the public cache is served without it. Express makes every
// request and response its own (it swaps their prototypes, which V8 then
// handles slowly) and walks its router: for a cached read that was about a
// fifth of the CPU the request cost (measured on the content bench).
//
// These are the few fields those steps set and read beyond Node's own.
// Express's Request and Response have them too, so every step serves both.
import type { IncomingMessage, ServerResponse } from 'node:http';

export type BareRequest = IncomingMessage & {
  /** The request id (./middleware/request-id.ts). */
  id: string;
  /** The URL as it arrived (Express keeps the same name for it). */
  originalUrl: string;
  /** The endpoint's path parameters, once the dispatcher found it (find-my-way: one string each). */
  params: Record<string, string | string[]>;
};

export type BareResponse = ServerResponse & {
  /** What the request is counted as (its route, its site), as Express's res.locals. */
  locals: Record<string, unknown>;
};

export type Next = (error?: unknown) => void;

/** One step of the request path, connect-style. */
export type Step = (req: BareRequest, res: BareResponse, next: Next) => unknown;

/** The path of the URL asked, without its query (what Express's req.path gives). */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  // A request line may carry a whole URL (absolute-form, RFC 9112 §3.2.2), which servers must accept.
  if (url[0] !== '/') return URL.canParse(url) ? new URL(url).pathname : url;
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
