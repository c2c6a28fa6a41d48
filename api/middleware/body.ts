// Request bodies: JSON, and the form encoding that OAuth-style login uses.
// Malformed JSON and oversized bodies become problems in ./problems.ts.
// One middleware, and a request without a body (most of them) passes
// straight through.
import express, { type RequestHandler } from 'express';

/**
 * Signed webhooks verify the bytes that were sent, before anything reads
 * them: their bodies stay raw (a Buffer), whatever the content type.
 */
const webhookPath = /^\/(?:[^/]+\/media\/webhook\/[^/]+|payments\/webhook)\/?$/i;

const hasBody = (headers: { 'content-length'?: string | undefined; 'transfer-encoding'?: string | undefined }) =>
  headers['transfer-encoding'] !== undefined ||
  (headers['content-length'] !== undefined && headers['content-length'] !== '0');

export function bodyParsers(limit: string): RequestHandler {
  const raw = express.raw({ limit, type: () => true });
  const json = express.json({ limit, type: ['application/json', 'application/*+json'] });
  const form = express.urlencoded({ limit, extended: false });
  return (req, res, next) => {
    if (!hasBody(req.headers)) {
      next();
      return;
    }
    if (webhookPath.test(req.path)) {
      raw(req, res, next);
      return;
    }
    // Each parser passes on a body that is not its type; multipart is read by the route itself.
    json(req, res, (error?: unknown) => (error ? next(error) : form(req, res, next)));
  };
}
