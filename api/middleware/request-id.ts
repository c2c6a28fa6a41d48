// Every request gets an id: the caller's X-Request-Id when it is sane (so a
// trace can cross services), otherwise a new UUID. It is echoed back and is
// on every log line and problem response of the request.
import { randomUUID } from 'node:crypto';
import type { Step } from '../bare.ts';

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): Step {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && acceptable.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}
