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
  // Gaps or duplicates mean a file was renamed or lost; applying around them would
  // leave databases that differ depending on when they were migrated.
  files.forEach((file, index) => {
    if (file.id !== index + 1)
      throw new Error(`Migration ${file.name} is out of sequence: expected number ${index + 1}`);
  });
  return files;
}
