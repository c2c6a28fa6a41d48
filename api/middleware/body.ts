// Request bodies: JSON, and the form encoding that OAuth-style login uses.
// Malformed JSON and oversized bodies become problems in ./problems.ts.
import type { IncomingMessage } from 'node:http';
import express from 'express';

/** Signed webhooks verify the bytes that were sent, not a re-serialisation of the parsed JSON. */
export type WithRawBody = { rawBody?: Buffer };

export function bodyParsers(limit: string) {
  return [
    express.json({
      limit,
      type: ['application/json', 'application/*+json'],
      verify: (req: IncomingMessage & WithRawBody, _res, buffer) => {
        if (req.url?.includes('/webhook/')) req.rawBody = buffer;
      },
    }),
    express.urlencoded({ limit, extended: false }),
  ];
}
