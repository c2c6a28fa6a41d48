// The storage driver chosen by configuration (STORAGE_DRIVER).
import type { Config } from '../config.ts';
import { localStorage } from './local.ts';
import { s3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: Config): Storage {
  return config.storage.driver === 's3' ? s3Storage(config.storage) : localStorage(config.storage.root);
}
