// The steps every request takes before Express (id, log, headers, routing:
// see ../bare.ts), run in the order given, each still its own file.
import type { Step } from '../bare.ts';

export function chain(...steps: Step[]): Step {
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
        const result = current(req, res, step);
        // An async step's failure reaches the error handler, as Express 5 does for a layer.
        if (result instanceof Promise) result.catch(step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };
}
