// Request bodies: JSON, and the form encoding that OAuth-style login uses.
// Malformed JSON and oversized bodies become problems in ./problems.ts.
import express from 'express';

export function bodyParsers(limit: string) {
  return [
    express.json({ limit, type: ['application/json', 'application/*+json'] }),
    express.urlencoded({ limit, extended: false }),
  ];
}
