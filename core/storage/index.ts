// The storage driver chosen by configuration (STORAGE_DRIVER).
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { localStorage } from './local.ts';
import { s3Storage } from './s3.ts';
import type { Storage } from './storage.ts';

export function createStorage(config: Config): Storage {
  return config.storage.driver === 's3' ? s3Storage(config.storage) : localStorage(config.storage.root);
}

/**
 * Removes the files of rows already deleted. Called after the commit: a file
 * whose row is gone is never served again, so a failure here is logged, not
 * raised (the orphan costs space, not correctness).
 */
export async function removeFiles(storage: Storage, logger: Logger, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    await storage
      .delete(key)
      .catch((error: unknown) =>
        logger.warn({ key, err: (error as Error).message }, 'could not remove a deleted media file'),
      );
  }
}
