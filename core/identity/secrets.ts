// Opaque high-entropy secrets (refresh tokens, client secrets, OAuth state):
// 256 random bits, stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

export const newSecret = (prefix = ''): string => `${prefix}${randomBytes(32).toString('base64url')}`;

export const digest = (secret: string): Buffer => createHash('sha256').update(secret).digest();

/** A short name for a stored secret (its hash), safe to hand out: a token carrying it dies with that secret. */
export const secretFingerprint = (secretHash: Buffer): string =>
  createHash('sha256').update(secretHash).digest().subarray(0, 12).toString('base64url');
