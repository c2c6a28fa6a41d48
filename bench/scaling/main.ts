// npm run bench:scaling: the measurements behind docs/scaling.md. Each
// section works on a database of its own on one PostgreSQL server, dropped
// afterwards: BENCH_DATABASE_URL (a URL whose user may create databases),
// else an embedded PostgreSQL started for the run. Prints a table; asserts
// nothing. `npm run bench:scaling -- queue` runs only the sections named
// (inventory, shards, delivery, pipeline, pickup, queue).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../core/logger.ts';
import { startEmbeddedPostgres } from '../../db/embedded.ts';
import { deliveryFigures } from './delivery.ts';
import { inventoryFigures } from './inventory.ts';
import { pickupFigures } from './pickup.ts';
import { pipelineFigures, type Server } from './pipeline.ts';
import { queueFigures } from './queue.ts';
import { shardFigures } from './shards.ts';

const only = new Set(process.argv.slice(2));
const section = (name: string) => only.size === 0 || only.has(name);

let server: Server = { adminUrl: process.env.BENCH_DATABASE_URL ?? '' };
let embedded: { stop(): Promise<void>; dir: string } | undefined;
if (!server.adminUrl) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-scaling-'));
  // As root the cluster runs as the postgres user, who must enter the folder.
  chmodSync(dir, 0o755);
  const started = await startEmbeddedPostgres({ dir, logger: createLogger('warn') });
  const postmaster = Number(readFileSync(path.join(started.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  server = { adminUrl: started.adminUrl, postmaster };
  embedded = { stop: () => started.stop(), dir };
}

const rows: [string, string][] = [
  ['Machine', `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), shared with whatever else runs`],
];
const print = () => {
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(`\n${rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}\n`);
};
try {
  if (section('inventory')) rows.push(...(await inventoryFigures(server)));
  if (section('shards')) rows.push(...(await shardFigures(server)));
  if (section('delivery')) rows.push(...(await deliveryFigures(server)));
  if (section('pipeline')) rows.push(...(await pipelineFigures(server)));
  if (section('pickup')) rows.push(...(await pickupFigures(server)));
  if (section('queue')) rows.push(...(await queueFigures(server)));
} finally {
  print();
  if (embedded) {
    await embedded.stop();
    rmSync(embedded.dir, { recursive: true, force: true });
  }
}
