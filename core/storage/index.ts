// The storage driver chosen by configuration.
import type { Config } from '../config.ts';
import { localStorage } from './local.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: Config): Storage {
  return localStorage(config.storage.root);
}
