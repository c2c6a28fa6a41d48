// Several middleware run as one Express layer. Each layer Express walks costs
// a match and a turn of its router on every request; the steps that every
// request takes (id, log, headers, body, routing) are chained here instead,
// in the order given, each still its own file.
import type { RequestHandler } from 'express';

export function chain(...steps: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) {
        next(error);
        return;
      }
      const current = steps[index++];
      if (!current) {
        next();
        return;
      }
      try {
        const result = current(req, res, step) as unknown;
        // An async step's failure reaches the error handler, as Express 5 does for a layer.
        if (result instanceof Promise) result.catch(step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };
}
