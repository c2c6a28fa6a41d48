// Configuration: parsed once, defaults for local use, and a bad value stops the
// process with a message naming the variable.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { defaultModel } from '../../core/providers/catalog.ts';
import { modelPrice, tokenCost } from '../../core/providers/prices.ts';
import { chainNames, chainVariable } from '../../core/providers/settings.ts';

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
    corsOrigins: ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'],
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

it('allows CORS from local origins outside production, and only from the named ones in production', () => {
  const secret = { JWT_SECRET: 'x'.repeat(32) };
  expect(loadConfig({}).corsOrigins).toContain('http://localhost:*');
  expect(loadConfig({ CORS_ORIGINS: 'https://a.example' }).corsOrigins).toEqual(['https://a.example']);
  expect(loadConfig({ NODE_ENV: 'production', ...secret }).corsOrigins).toEqual([]);
  expect(loadConfig({ NODE_ENV: 'production', ...secret, CORS_ORIGINS: 'https://a.example' }).corsOrigins).toEqual([
    'https://a.example',
  ]);
});

it('refuses a CORS origin no browser would send, saying what one looks like', () => {
  expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example/' })).toThrow(
    /CORS_ORIGINS: must be origins such as https:\/\/app\.example/,
  );
  expect(() => loadConfig({ CORS_ORIGINS: 'localhost:3000' })).toThrow(/CORS_ORIGINS/);
  expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
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
  it.each(['api/main.ts', 'worker/main.ts', 'scripts/migrate.ts', 'scripts/start.ts'])(
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

it('documents every variable in docs/configuration.md', async () => {
  const { readFileSync } = await import('node:fs');
  const { configVariables } = await import('../../core/config.ts');
  const table = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  for (const name of configVariables) expect(table).toContain(`| \`${name}\` |`);
  // And nothing the configuration no longer reads (a row of one variable; the grouped rows name patterns).
  const rows = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((row) => row[1]);
  expect(rows.filter((name) => !configVariables.includes(name!))).toEqual([]);
});

it('keeps the knowledge-base chunk overlap within half a chunk', () => {
  expect(loadConfig({})).toMatchObject({ knowledge: { chunkTokens: 500, overlapTokens: 50 } });
  expect(() => loadConfig({ KNOWLEDGE_CHUNK_TOKENS: '100', KNOWLEDGE_CHUNK_OVERLAP: '51' })).toThrow(
    /KNOWLEDGE_CHUNK_OVERLAP: must be at most half of KNOWLEDGE_CHUNK_TOKENS/,
  );
  expect(() => loadConfig({ KNOWLEDGE_CHUNK_TOKENS: '10' })).toThrow(/KNOWLEDGE_CHUNK_TOKENS/);
});

// The AI providers, read by core/providers/settings.ts through loadConfig.
describe('AI providers', () => {
  const keys = { OPENAI_API_KEY: 'sk-test', REPLICATE_API_TOKEN: 'r8_test', FAL_KEY: 'fal-test' };
  /** The one line the configuration is refused with. */
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('the configuration was accepted');
  };

  it('runs everything on the local stand-ins when no provider is named, and embeds nothing', () => {
    expect(loadConfig({}).providers.chains).toEqual({
      image: ['local'],
      image_edit: ['local'],
      video: ['local'],
      video_variant_a: ['local'],
      video_variant_b: ['local'],
      speech: ['local'],
      text: ['local'],
      embeddings: [],
    });
  });

  it('reads each chain in the order written, with each vendor’s key and base URL', () => {
    const { providers } = loadConfig({
      ...keys,
      PUBLIC_URL: 'https://cms.example.com',
      IMAGE_PROVIDERS: 'replicate, openai,local',
      VIDEO_VARIANT_B_PROVIDERS: 'fal,replicate',
      SPEECH_PROVIDERS: 'openai,local',
      EMBEDDING_PROVIDERS: 'openai',
      OPENAI_BASE_URL: 'https://eu.api.openai.com/v1/',
    });
    expect(providers.chains).toMatchObject({
      image: ['replicate', 'openai', 'local'],
      video_variant_b: ['fal', 'replicate'],
      speech: ['openai', 'local'],
      text: ['local'],
      embeddings: ['openai'],
    });
    expect(providers.vendors.openai).toMatchObject({ apiKey: 'sk-test', baseUrl: 'https://eu.api.openai.com/v1' });
    expect(providers.vendors.replicate).toMatchObject({ apiKey: 'r8_test', baseUrl: 'https://api.replicate.com' });
  });

  it.each([
    ['IMAGE_PROVIDERS', 'midjourney', 'image'],
    ['VIDEO_PROVIDERS', 'openai', 'video'],
    ['SPEECH_PROVIDERS', 'fal', 'speech'],
    ['TEXT_PROVIDERS', 'elevenlabs', 'text'],
    ['EMBEDDING_PROVIDERS', 'local', 'embeddings'],
  ])('refuses %s=%s, a vendor unknown or not making it, naming the variable', (variable, vendor, capability) => {
    expect(refusal({ ...keys, PUBLIC_URL: 'https://cms.example.com', [variable]: vendor })).toMatch(
      new RegExp(`^Invalid configuration:\\n {2}${variable}: ${vendor} does not make ${capability}; one of `, 'm'),
    );
  });

  it('refuses a vendor without its key, naming the key to set; a compatible server of its own base URL needs none', () => {
    expect(refusal({ IMAGE_PROVIDERS: 'openai' })).toMatch(/\n {2}IMAGE_PROVIDERS: openai needs OPENAI_API_KEY$/);
    expect(refusal({ SPEECH_PROVIDERS: 'elevenlabs' })).toMatch(
      /\n {2}SPEECH_PROVIDERS: elevenlabs needs ELEVENLABS_API_KEY$/,
    );
    // Ollama, say, on its own host: no key to send.
    const ollama = loadConfig({ TEXT_PROVIDERS: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(ollama.providers.chains.text).toEqual(['openai']);
    expect(ollama.providers.vendors.openai).toMatchObject({ apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1' });
  });

  it('refuses Replicate and fal without PUBLIC_URL, which their webhooks reach', () => {
    expect(refusal({ ...keys, IMAGE_PROVIDERS: 'replicate' })).toMatch(
      /\n {2}IMAGE_PROVIDERS: replicate delivers by webhook, which needs PUBLIC_URL$/,
    );
    expect(refusal({ ...keys, VIDEO_PROVIDERS: 'fal' })).toMatch(
      /\n {2}VIDEO_PROVIDERS: fal delivers by webhook, which needs PUBLIC_URL$/,
    );
    expect(
      loadConfig({ ...keys, IMAGE_PROVIDERS: 'replicate', PUBLIC_URL: 'https://cms.example.com' }).providers.chains
        .image,
    ).toEqual(['replicate']);
  });

  it('refuses local anywhere but last: the placeholder is what is left when the vendors cannot', () => {
    expect(refusal({ ...keys, IMAGE_PROVIDERS: 'local,openai' })).toMatch(/\n {2}IMAGE_PROVIDERS: local comes last, /);
    expect(refusal({ ...keys, SPEECH_PROVIDERS: 'openai,openai' })).toMatch(
      /\n {2}SPEECH_PROVIDERS: openai is named twice$/,
    );
  });

  it('allows the models <VENDOR>_<CAPABILITY>_MODELS lists, the first the default; else the catalog’s default', () => {
    const { providers } = loadConfig({
      ...keys,
      IMAGE_PROVIDERS: 'openai',
      SPEECH_PROVIDERS: 'openai',
      EMBEDDING_PROVIDERS: 'openai',
      OPENAI_IMAGE_MODELS: 'gpt-image-1, dall-e-3',
      OPENAI_EMBEDDING_MODELS: 'text-embedding-3-large',
    });
    expect(providers.models.openai).toMatchObject({
      image: ['gpt-image-1', 'dall-e-3'],
      embeddings: ['text-embedding-3-large'],
      speech: [defaultModel('openai', 'speech')],
    });
    expect(defaultModel('openai', 'speech')).toEqual(expect.any(String));
    // Only the chains' vendors have models.
    expect(providers.models).not.toHaveProperty('replicate');
  });

  it('reads <VENDOR>_<CAPABILITY>_PRICES as model=credits pairs, names with / and : included', () => {
    const { providers } = loadConfig({
      ...keys,
      PUBLIC_URL: 'https://cms.example.com',
      IMAGE_PROVIDERS: 'replicate,openai,local',
      REPLICATE_IMAGE_MODELS: 'owner/model:abc123',
      REPLICATE_IMAGE_PRICES: 'owner/model:abc123 = 2.5',
      OPENAI_IMAGE_PRICES: 'gpt-image-2=30',
      LOCAL_IMAGE_PRICES: 'local=0.5',
    });
    expect(providers.prices).toMatchObject({
      replicate: { image: { 'owner/model:abc123': 2.5 } },
      openai: { image: { 'gpt-image-2': 30 } },
      local: { image: { local: 0.5 } },
    });
    expect(modelPrice(providers, 'image', 'openai', 'gpt-image-2')).toEqual({
      unit: 'item',
      unit_price: 30,
      source: 'configured',
    });
    // A model the catalog does not know, priced by the operator, in the unit its capability is usually billed.
    expect(modelPrice(providers, 'image', 'replicate', 'owner/model:abc123')).toMatchObject({ unit: 'item' });
    expect(modelPrice(providers, 'speech', 'openai', 'unknown-voice-model')).toBeUndefined();
  });

  it('reads a chat model’s tokens read and written apart, or one price for both, and the catalog’s two', () => {
    const { providers } = loadConfig({
      ...keys,
      PUBLIC_URL: 'https://cms.example.com',
      TEXT_PROVIDERS: 'openai,local',
      OPENAI_TEXT_MODELS: 'gpt-5.4-mini,gpt-4o-mini,gpt-4.1-mini',
      OPENAI_TEXT_PRICES: 'gpt-5.4-mini=0.1/0.5, gpt-4o-mini=0.03',
    });
    expect(modelPrice(providers, 'text', 'openai', 'gpt-5.4-mini')).toEqual({
      unit: '1k_tokens',
      unit_price: 0.1,
      output_unit_price: 0.5,
      source: 'configured',
    });
    expect(modelPrice(providers, 'text', 'openai', 'gpt-4o-mini')).toEqual({
      unit: '1k_tokens',
      unit_price: 0.03,
      source: 'configured',
    });
    expect(modelPrice(providers, 'text', 'openai', 'gpt-4.1-mini')).toEqual({
      unit: '1k_tokens',
      unit_price: 0.04,
      output_unit_price: 0.16,
      source: 'catalog',
    });
    // 2,000 tokens read and 500 written: 2 × 0.1 + 0.5 × 0.5.
    const call = modelPrice(providers, 'text', 'openai', 'gpt-5.4-mini')!;
    expect(tokenCost(call, { inputTokens: 2000, outputTokens: 500 })).toBeCloseTo(0.45, 9);
  });

  it.each([
    ['OPENAI_TEXT_PRICES', 'gpt-5.4-mini=0.1/', /is not model=credits or model=input\/output credits/],
    ['OPENAI_TEXT_PRICES', 'gpt-5.4-mini=1/2/3', /is not model=credits or model=input\/output credits/],
    ['OPENAI_IMAGE_PRICES', 'gpt-image-2=20/30', /gpt-image-2=20\/30 is not model=credits \(/],
  ])('refuses %s=%s: two prices are a chat model’s only', (variable, value, message) => {
    expect(refusal({ ...keys, IMAGE_PROVIDERS: 'openai', TEXT_PROVIDERS: 'openai', [variable]: value })).toMatch(
      message,
    );
  });

  it.each([
    ['OPENAI_IMAGE_PRICES', 'gpt-image-2', /gpt-image-2 is not model=credits/],
    ['OPENAI_IMAGE_PRICES', 'gpt-image-2=-1', /is not model=credits/],
    ['OPENAI_IMAGE_PRICES', 'gpt-image-2=lots', /is not model=credits/],
    ['OPENAI_IMAGE_PRICES', 'gpt-image-2=1=2', /is not model=credits/],
    ['OPENAI_IMAGE_PRICES', 'dall-e-3=40', /dall-e-3 is not one of OPENAI_IMAGE_MODELS \(gpt-image-2\)/],
  ])('refuses %s=%s', (variable, value, message) => {
    expect(refusal({ ...keys, IMAGE_PROVIDERS: 'openai', [variable]: value })).toMatch(message);
  });

  it('still reads the single OpenAI-compatible provider’s variables where the new ones are unset', () => {
    const legacy = {
      AI_BASE_URL: 'https://llm.example.com/v1',
      AI_API_KEY: 'legacy-key',
      SPEECH_PROVIDER: 'openai',
      AI_SPEECH_MODEL: 'tts-1',
      IMAGE_PROVIDER: 'openai',
      TEXT_PROVIDER: 'openai',
      AI_EMBEDDING_MODEL: 'text-embedding-3-small',
    };
    const { providers } = loadConfig(legacy);
    expect(providers.chains).toMatchObject({
      speech: ['openai'],
      image: ['openai'],
      image_edit: ['openai'],
      text: ['openai'],
      embeddings: ['openai'],
    });
    expect(providers.vendors.openai).toMatchObject({ apiKey: 'legacy-key', baseUrl: 'https://llm.example.com/v1' });
    expect(providers.models.openai).toMatchObject({ speech: ['tts-1'], embeddings: ['text-embedding-3-small'] });
    // The new variables win where both are set.
    const both = loadConfig({
      ...legacy,
      SPEECH_PROVIDERS: 'local',
      OPENAI_BASE_URL: 'https://api.openai.com/v1',
      OPENAI_API_KEY: 'sk-new',
    }).providers;
    expect(both.chains.speech).toEqual(['local']);
    expect(both.vendors.openai).toMatchObject({ apiKey: 'sk-new', baseUrl: 'https://api.openai.com/v1' });
    // An embedding model with nothing to reach it is refused, as before, naming what to set.
    expect(refusal({ AI_EMBEDDING_MODEL: 'text-embedding-3-small' })).toMatch(
      /\n {2}EMBEDDING_PROVIDERS: openai needs OPENAI_API_KEY$/,
    );
  });

  it('names every chain’s variable in docs/configuration.md', async () => {
    const { readFileSync } = await import('node:fs');
    const table = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
    for (const chain of chainNames) expect(table).toContain(`\`${chainVariable(chain)}\``);
  });

  it('refuses SPEECH_PROVIDER=async, the retired mediaprovider protocol, saying what replaced it', () => {
    expect(refusal({ SPEECH_PROVIDER: 'async' })).toMatch(
      /^Invalid configuration:\n {2}SPEECH_PROVIDER: async is retired; name the providers in SPEECH_PROVIDERS instead$/m,
    );
  });
});
