// Every failure leaves as application/problem+json (RFC 9457): unknown routes,
// malformed bodies, validation, timeouts, and anything unexpected — the last
// as a bare 500 whose details go to the log, never to the client.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ZodError } from 'zod';
import { Problem } from '../../core/errors.ts';

export function sendProblem(req: Request, res: Response, problem: Problem): void {
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  const body = { ...problem.toBody(req.originalUrl.split('?')[0]), request_id: (req as { id?: string }).id };
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(body));
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
      req.log?.debug({ err: error }, 'error after the response was sent');
      return;
    }
    if (!problem) {
      req.log?.error({ err: error }, 'unhandled error');
      sendProblem(req, res, new Problem(500, 'An unexpected error occurred. It has been logged with the request id.'));
      return;
    }
    if (problem.status >= 500) req.log?.error({ err: error }, problem.message);
    sendProblem(req, res, problem);
  };
}
