// How long POST /auth/password-reset-request takes for an address with an
// account and for one without. The two must cost the same, or the time of the
// answer says which addresses have accounts (issue 36, item 14). Measured, not
// asserted: `node bench/password-reset.ts`, against BENCH_DATABASE_URL (a
// server where it may create and drop a database; default the local one).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../api/app.ts';
import { closeServices, createServices } from '../core/boot.ts';
import { loadConfig } from '../core/config.ts';
import { insertUser } from '../core/identity/users.ts';
import { createLogger } from '../core/logger.ts';
import { migrate } from '../db/migrate.ts';
import { median } from './compare.ts';
import { benchLimits } from './limits.ts';

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rounds = Number(process.env.BENCH_ROUNDS ?? 400);

async function onAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const name = `bench_reset_${randomBytes(4).toString('hex')}`;
const url = new URL(adminUrl);
url.pathname = `/${name}`;
await onAdmin(`create database ${name}`);
try {
  await migrate(url.href);
  const config = loadConfig({ ...benchLimits, NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: url.href });
  const services = await createServices(config, url.href, createLogger('silent'), 'bench');
  const server = http.createServer(createApp(services));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const known = await insertUser(services.db, {
      email: 'known@example.com',
      password: '',
      password_hash: null,
      full_name: 'Known',
      email_verified: true,
    });
    const ask = async (email: string) => {
      const started = performance.now();
      const res = await fetch(`${base}/auth/password-reset-request`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`answered ${res.status}`);
      return performance.now() - started;
    };
    const times = { known: [] as number[], unknown: [] as number[] };
    // Alternating, so a shared machine's drift falls on both alike; the first rounds warm up and are not kept.
    for (let round = -50; round < rounds; round++) {
      const order = round % 2 === 0 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const);
      for (const which of order) {
        const ms = await ask(which === 'known' ? known.email : `nobody-${round}@example.com`);
        if (round >= 0) times[which].push(ms);
      }
    }
    const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!;
    console.table(
      Object.entries(times).map(([address, values]) => ({
        address,
        requests: values.length,
        'median ms': median(values).toFixed(2),
        'p90 ms': p90(values).toFixed(2),
      })),
    );
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await closeServices(services);
  }
} finally {
  await onAdmin(`drop database if exists ${name} with (force)`);
}
