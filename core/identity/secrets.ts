// Opaque high-entropy secrets (refresh tokens, client secrets, OAuth state):
// 256 random bits, stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

export const newSecret = (prefix = ''): string => `${prefix}${randomBytes(32).toString('base64url')}`;

export const digest = (secret: string): Buffer => createHash('sha256').update(secret).digest();
