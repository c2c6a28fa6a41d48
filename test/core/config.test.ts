// Configuration: parsed once, defaults for local use, and a bad value stops the
// process with a message naming the variable.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';

const root = path.join(import.meta.dirname, '..', '..');

it('has working defaults with an empty environment', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    env: 'development',
    port: 3000,
    databaseUrl: undefined,
    dataDir: path.resolve('.data'),
    mediaDir: path.resolve('.data', 'media'),
    worker: { concurrency: 4 },
    corsOrigins: [],
    admin: { email: 'admin@example.com', isDefault: true },
  });
});

it('parses values and lists', () => {
  const config = loadConfig({
    PORT: '8080',
    WORKER_CONCURRENCY: '8',
    CORS_ORIGINS: 'https://a.example, https://b.example',
    TRUST_PROXY: '1',
  });
  expect(config).toMatchObject({
    port: 8080,
    worker: { concurrency: 8 },
    corsOrigins: ['https://a.example', 'https://b.example'],
    trustProxy: 1,
  });
});

it('reads TRUST_PROXY as a number of hops, or the proxies’ addresses, ranges and names', () => {
  expect(loadConfig({}).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::1' }).trustProxy).toEqual([
    'loopback',
    '10.0.0.0/8',
    'fd00::1',
  ]);
});

it('refuses TRUST_PROXY=true, which would believe whatever the client writes, saying what to write instead', () => {
  expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(
    /^Invalid configuration:\n {2}TRUST_PROXY: .*how many proxies .* \(e\.g\. 1\) or their addresses \(e\.g\. loopback, 10\.0\.0\.0\/8\)/,
  );
});

it('treats an empty variable as unset', () => {
  expect(loadConfig({ DATABASE_URL: '', PORT: '' })).toMatchObject({ databaseUrl: undefined, port: 3000 });
});

it.each([
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['WORKER_CONCURRENCY', '0'],
  ['LOG_LEVEL', 'loud'],
  ['REDIS_URL', 'localhost:6379'],
  ['ADMIN_PASSWORD', 'short'],
  ['BODY_LIMIT', 'lots'],
  ['TRUST_PROXY', 'yes'],
  ['TRUST_PROXY', '10.0.0.300'],
  ['TRUST_PROXY', 'loopback, my-proxy'],
])('rejects %s=%s naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}: `));
});

it('requires a real JWT secret in production', () => {
  expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET: required in production/);
  expect(() => loadConfig({ JWT_SECRET: 'short' })).toThrow(/JWT_SECRET: must be at least 32 characters$/);
});

it('never echoes a secret back in the message', () => {
  expect(() => loadConfig({ ADMIN_PASSWORD: 'short' })).toThrow(/ADMIN_PASSWORD: must be at least 10 characters$/);
});

it('creates no default admin in production', () => {
  const secret = { JWT_SECRET: 'x'.repeat(32) };
  expect(loadConfig({ NODE_ENV: 'production', ...secret }).admin).toBeUndefined();
  expect(
    loadConfig({ NODE_ENV: 'production', ...secret, ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'a-long-secret' })
      .admin,
  ).toEqual({
    email: 'ops@example.com',
    password: 'a-long-secret',
    isDefault: false,
  });
});

describe('a process started with a bad value', () => {
  it.each(['api/main.ts', 'worker/main.ts', 'db/main.ts', 'scripts/start.ts'])(
    '%s stops with exit 1 and names it',
    (entry) => {
      const result = spawnSync(process.execPath, [path.join(root, entry)], {
        env: { PATH: process.env.PATH, PORT: 'not-a-port', DATABASE_URL: 'postgres://127.0.0.1:1/none' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('Invalid configuration:\n  PORT: ');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('the API stops when DATABASE_URL is missing, saying what to do', () => {
    const result = spawnSync(process.execPath, [path.join(root, 'api/main.ts')], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/DATABASE_URL: required for this command/);
  });
});

it('documents every variable in the README', async () => {
  const { readFileSync } = await import('node:fs');
  const { configVariables } = await import('../../core/config.ts');
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  for (const name of configVariables) expect(readme).toContain(`| \`${name}\` |`);
});

it('embeds knowledge-base chunks only with a provider to ask, and keeps the chunk overlap within half a chunk', () => {
  expect(loadConfig({})).toMatchObject({
    ai: { embeddingModel: undefined },
    knowledge: { chunkTokens: 500, overlapTokens: 50 },
  });
  expect(() => loadConfig({ AI_EMBEDDING_MODEL: 'text-embedding-3-small' })).toThrow(
    /AI_EMBEDDING_MODEL: needs AI_BASE_URL/,
  );
  expect(
    loadConfig({ AI_EMBEDDING_MODEL: 'text-embedding-3-small', AI_BASE_URL: 'https://api.example.com/v1' }).ai,
  ).toMatchObject({ embeddingModel: 'text-embedding-3-small' });
  expect(() => loadConfig({ KNOWLEDGE_CHUNK_TOKENS: '100', KNOWLEDGE_CHUNK_OVERLAP: '51' })).toThrow(
    /KNOWLEDGE_CHUNK_OVERLAP: must be at most half of KNOWLEDGE_CHUNK_TOKENS/,
  );
  expect(() => loadConfig({ KNOWLEDGE_CHUNK_TOKENS: '10' })).toThrow(/KNOWLEDGE_CHUNK_TOKENS/);
});
