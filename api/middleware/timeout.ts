// The endpoint's timeout from the manifest: when it passes the client gets a
// 504 problem and the request's AbortSignal fires, which cancels its running
// database statement (db/cancellable.ts) and any wait that listens to it.
import type { RequestHandler } from 'express';
import { Problem } from '../../core/errors.ts';
import { sendProblem } from './problems.ts';

export type Deadline = { signal: AbortSignal; deadline: number };

export function timeout(ms: number): RequestHandler {
  return (req, res, next) => {
    const controller = new AbortController();
    const deadline = Date.now() + ms;
    res.locals.deadline = { signal: controller.signal, deadline } satisfies Deadline;
    const timer = setTimeout(() => {
      const problem = new Problem(504, `The request did not complete within ${ms / 1000} s.`);
      controller.abort(problem);
      if (!res.headersSent) sendProblem(req, res, problem);
    }, ms);
    timer.unref();
    // A client that disconnects no longer needs the work done either.
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
    });
    next();
  };
}
