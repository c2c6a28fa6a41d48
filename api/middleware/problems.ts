// Every failure leaves as application/problem+json (RFC 9457): unknown routes,
// malformed bodies, validation, timeouts, a database that cannot be reached
// (503 with Retry-After, wherever the request was when it failed), and
// anything unexpected — the last as a bare 500 whose details go to the log,
// never to the client.
import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { BareRequest } from '../bare.ts';
import { ZodError } from 'zod';
import { causes, databaseUnavailable, isDatabaseUnavailable, Problem } from '../../core/errors.ts';
import { requestLog } from './logging.ts';

export function sendProblem(req: BareRequest, res: ServerResponse, problem: Problem): void {
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  const body = JSON.stringify({ ...problem.toBody(req.originalUrl.split('?')[0]), request_id: req.id });
  res.statusCode = problem.status;
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function fromZodError(error: ZodError, location?: string): Problem {
  return new Problem(422, 'The request is not valid; see errors.', {
    errors: error.issues.map((issue) => ({
      path: [location, ...issue.path].filter((part) => part !== undefined).join('.'),
      message: issue.message,
    })),
  });
}

type HttpError = Error & { status?: number; statusCode?: number; type?: string; expose?: boolean };

// PostgreSQL refuses to store NUL characters and unpaired UTF-16 surrogates in
// text and jsonb (SQLSTATE 22P05, 22021); JSON allows them. That is the
// client's input, not our failure. Slonik keeps the driver's error as `cause`.
function unstorableText(error: unknown): boolean {
  for (const { code } of causes(error)) if (code === '22P05' || code === '22021') return true;
  return false;
}

export function toProblem(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof ZodError) return fromZodError(error);
  const httpError = error as HttpError;
  // body-parser and express raise errors carrying a status and a type.
  switch (httpError?.type) {
    case 'entity.parse.failed':
      return new Problem(400, 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new Problem(413, 'The request body is too large.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new Problem(415, httpError.message);
  }
  if (unstorableText(error)) {
    return new Problem(
      422,
      'The request contains text that cannot be stored: a NUL character (\\u0000) or an unpaired surrogate.',
    );
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  const status = httpError?.status ?? httpError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new Problem(status, httpError.expose ? httpError.message : undefined);
  }
  return undefined;
}

export function notFound(): RequestHandler {
  return (req, res) => {
    sendProblem(req, res, new Problem(404, `No endpoint ${req.method} ${req.path}.`));
  };
}

export function errorHandler(): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const problem = toProblem(error);
    if (res.headersSent) {
      // Typically the work abandoned after a 504 failing as it is cancelled.
      requestLog(req).debug({ err: error }, 'error after the response was sent');
      return;
    }
    if (!problem) {
      requestLog(req).error({ err: error }, 'unhandled error');
      sendProblem(req, res, new Problem(500, 'An unexpected error occurred. It has been logged with the request id.'));
      return;
    }
    // A 503 is a dependency that is away (the database, a provider not configured), not a fault here.
    if (problem.status === 503) requestLog(req).warn({ err: (error as Error).message }, problem.message);
    else if (problem.status >= 500) requestLog(req).error({ err: error }, problem.message);
    sendProblem(req, res, problem);
  };
}
