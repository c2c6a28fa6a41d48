// Files in a local folder (DATA_DIR/media by default). Writes go to a
// temporary file renamed into place, so a reader never sees half a file and a
// crash leaves no partial object under a real key.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { checkKey, type ListedObject, type Storage, type StoredObject } from './storage.ts';

/** Flushes a folder's entries to the disk. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function localStorage(root: string): Storage {
  const fileOf = (key: string) => path.join(root, checkKey(key));
  return {
    driver: 'local',
    async put(key, body): Promise<StoredObject> {
      const file = fileOf(key);
      // The first folder this put had to make, if any: its entry lives in its parent.
      const made = await mkdir(path.dirname(file), { recursive: true });
      const temporary = `${file}.${randomUUID()}.partial`;
      try {
        // A row that names the object commits right after a put: the file and the folders naming it are
        // flushed first, or a machine that lost power could keep the row and come back without the file.
        await pipeline(
          Buffer.isBuffer(body) ? Readable.from([body]) : body,
          createWriteStream(temporary, { flush: true }),
        );
        await rename(temporary, file);
        // The rename lives in the file's folder, and each folder made for it in its parent.
        // Windows cannot open a folder to flush it.
        if (process.platform !== 'win32') {
          const last = made ? path.dirname(made) : path.dirname(file);
          for (let folder = path.dirname(file); ; folder = path.dirname(folder)) {
            await syncFolder(folder);
            if (folder === last || folder === path.dirname(folder)) break;
          }
        }
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      return { key, size: (await stat(file)).size };
    },
    async read(key, range) {
      const file = fileOf(key);
      if ((await this.size(key)) === null) return null;
      return createReadStream(file, range ? { start: range.start, end: range.end } : {});
    },
    async size(key) {
      try {
        return (await stat(fileOf(key))).size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async delete(key) {
      await rm(fileOf(key), { force: true });
    },
    // Temporary files of writes under way, or cut short by a crash, are listed too (`<key>.<uuid>.partial`).
    async *list(): AsyncIterable<ListedObject> {
      const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      });
      const keys = entries
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
        .sort();
      for (const key of keys) {
        const found = await stat(path.join(root, key)).catch(() => undefined);
        if (found) yield { key, modified: found.mtime };
      }
    },
  };
}
