// The migration files on disk: numbered, forward-only SQL, each with the
// checksum that is recorded when it is applied.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type MigrationFile = { id: number; name: string; sql: string; checksum: string };

export const migrationsDir = path.join(import.meta.dirname, 'migrations');

const fileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export function readMigrationFiles(dir = migrationsDir): MigrationFile[] {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const match = fileName.exec(name);
      if (!match) throw new Error(`Migration file ${name} must be named NNNN_description.sql`);
      const sql = readFileSync(path.join(dir, name), 'utf8');
      return { id: Number(match[1]), name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
  // A number twice means two changes claim one place in the history. Gaps are
  // allowed: numbers are handed out to work done in parallel, and a number
  // that is never used leaves nothing to apply.
  files.forEach((file, index) => {
    const previous = files[index - 1];
    if (previous && file.id === previous.id)
      throw new Error(`Migrations ${previous.name} and ${file.name} have the same number`);
  });
  return files;
}
