// Request bodies: JSON, and the form encoding that OAuth-style login uses.
// Malformed JSON and oversized bodies become problems in ./problems.ts.
import express, { type RequestHandler } from 'express';

/**
 * Signed webhooks verify the bytes that were sent, before anything reads
 * them: their bodies stay raw (a Buffer), whatever the content type, and the
 * JSON parser after this skips a body already read.
 */
const webhookPath = /^\/[^/]+\/media\/webhook\/[^/]+\/?$/;

function rawWebhookBodies(limit: string): RequestHandler {
  const raw = express.raw({ limit, type: () => true });
  return (req, res, next) => (webhookPath.test(req.path) ? raw(req, res, next) : next());
}

export function bodyParsers(limit: string) {
  return [
    rawWebhookBodies(limit),
    express.json({ limit, type: ['application/json', 'application/*+json'] }),
    express.urlencoded({ limit, extended: false }),
  ];
}
