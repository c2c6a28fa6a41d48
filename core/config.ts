// Every environment variable the service reads, parsed once at start.
// Nothing else in the code base reads process.env: it receives a Config.
import path from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { readProviders } from './providers/settings.ts';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const optionalUrl = z.url().optional();
/** Comma-separated values, trimmed, empty ones dropped. */
const list = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );
/** Whom CORS allows outside production when CORS_ORIGINS is unset: any port of this machine (`:*`). */
export const localOrigins = ['http://localhost:*', 'http://127.0.0.1:*', 'http://[::1]:*'];
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');
/**
 * Which proxies may say who the client is (X-Forwarded-For): none (`false`),
 * how many stand in front of the API (`1`), or their addresses, CIDR ranges
 * and proxy-addr's names (`loopback, 10.0.0.0/8`). `true` is refused: it
 * would believe the left-most entry, which the client writes.
 */
const trustProxy = z.string().transform((value, ctx): false | number | string[] => {
  const setting = value.trim().toLowerCase();
  if (setting === 'false' || setting === 'no') return false;
  if (/^\d+$/.test(setting)) return Number(setting) || false;
  if (setting === 'true' || setting === 'yes') {
    ctx.addIssue({
      code: 'custom',
      message:
        'trusting every proxy would let a client name its own address; write how many proxies stand in front of ' +
        'the API (e.g. 1) or their addresses (e.g. loopback, 10.0.0.0/8)',
    });
    return z.NEVER;
  }
  const proxies = setting
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const proxy of proxies) {
    try {
      proxyaddr.compile(proxy);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: `"${proxy}" is not a number of hops, an IP address, a CIDR range, loopback, linklocal or uniquelocal`,
      });
      return z.NEVER;
    }
  }
  return proxies;
});

/** Variables with their defaults; the table of docs/configuration.md mirrors this list. */
const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: port.default(3000),
  PUBLIC_URL: optionalUrl,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  // The role the API and the worker act as, bound by row-level security (db/tenant-scope.ts, migration 0034).
  DATABASE_APP_ROLE: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'must be a role name (lower case letters, digits and underscores)')
    .optional(),
  // A streaming replica for public delivery, search and statistics reads (db/replica.ts).
  DATABASE_READ_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_READ_MAX_LAG_MS: positiveInt.max(60_000).default(1000),
  ACCESS_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  ACCESS_CACHE_MAX_ENTRIES: positiveInt.default(10_000),
  PUBLIC_CACHE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  PUBLIC_CACHE_MAX_ENTRIES: positiveInt.default(10_000),
  PUBLIC_MAX_AGE: z.coerce.number().int().min(0).max(31_536_000).default(60),
  PUBLIC_STALE_WHILE_REVALIDATE: z.coerce.number().int().min(0).max(31_536_000).default(300),
  // Large sites' search documents held in memory by each API process (core/search/memory/indexes.ts).
  SEARCH_MEMORY_MB: z.coerce.number().int().min(0).max(65_536).default(512),
  SEARCH_MEMORY_MIN_DOCUMENTS: z.coerce.number().int().min(0).default(20_000),
  DATA_DIR: z.string().min(1).default('.data'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  WORKER_CONCURRENCY: positiveInt.max(100).default(4),
  // The kinds of job this worker process takes (a pool per kind: worker/queue-gate.ts); empty, every kind.
  WORKER_KINDS: list,
  WORKER_POLL_INTERVAL_MS: positiveInt.default(2000),
  WORKER_SHUTDOWN_GRACE_MS: positiveInt.default(20_000),
  WORKER_HEARTBEAT_MS: positiveInt.default(10_000),
  WORKER_LOST_AFTER_MS: positiveInt.default(45_000),
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(25_000),
  // The most jobs of one tenant running at once in a pool (the workers of one WORKER_KINDS, or all of them without
  // it; worker/tenant-slots.ts), and in one process never every slot: per pool, so a tenant's videos in the media
  // pool do not keep its speech job out of the light pool.
  JOB_TENANT_CONCURRENCY: positiveInt.max(50).default(2),
  JOB_MAX_ATTEMPTS: positiveInt.max(25).default(5),
  JOB_RETENTION_DAYS: positiveInt.default(30),
  JOB_WAITING_HOURS: positiveInt.default(24),
  // Outbound job webhooks: host names whose webhooks may be plain http (for development), the time an attempt may
  // take, and the waits before each retry (Standard Webhooks' example schedule; its length is the number of retries).
  JOB_WEBHOOK_HTTP_HOSTS: list,
  JOB_WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(15_000),
  JOB_WEBHOOK_RETRY_SECONDS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be seconds separated by commas, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((value) => value.split(',').map(Number))
    .refine((waits) => waits.length <= 20, 'at most 20 retries'),
  // The AI providers (chains per capability, vendors' keys, base URLs, models and limits) are read by
  // core/providers/settings.ts from the variables it names; the time one provider call may take is here.
  SPEECH_MAX_CHARACTERS: positiveInt.max(100_000).default(5000),
  AI_TIMEOUT_MS: positiveInt.default(60_000),
  // The longest one scene of a locally composed video may take ffmpeg.
  VIDEO_RENDER_TIMEOUT_MS: positiveInt.default(20 * 60_000),
  KNOWLEDGE_CHUNK_TOKENS: positiveInt.min(50).max(8000).default(500),
  KNOWLEDGE_CHUNK_OVERLAP: z.coerce.number().int().min(0).max(4000).default(50),
  ESPEAK_PATH: z.string().min(1).optional(),
  FFMPEG_PATH: z.string().min(1).optional(),
  FFPROBE_PATH: z.string().min(1).optional(),
  MEDIA_MAX_UPLOAD_BYTES: positiveInt.default(256 * 1024 * 1024),
  MEDIA_MAX_PIXELS: positiveInt.default(50_000_000),
  MEDIA_EXIF_GPS: bool.default(false),
  // For tests and benches that serve pages on 127.0.0.1: user-given URLs may then reach loopback (never in production).
  FETCH_ALLOW_LOOPBACK: bool.default(false),
  PDF_MAX_BYTES: positiveInt.default(20 * 1024 * 1024),
  PDF_MAX_PAGES: positiveInt.max(10_000).default(200),
  PDF_TIMEOUT_MS: positiveInt.default(60_000),
  // The heap of the thread one PDF is read on (worker/posts/pdf-text.ts); V8 needs a few MB of its own.
  PDF_MEMORY_MB: positiveInt.min(16).default(256),
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: optionalUrl,
  S3_FORCE_PATH_STYLE: bool.default(false),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_REDIRECT_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .default(0),
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  // A worker process serves its own /metrics on this port when set (worker/metrics-server.ts); 0 takes a free one.
  WORKER_METRICS_PORT: port.optional(),
  // An origin is scheme, host and port, nothing more: a trailing slash or a path would match no browser's Origin.
  CORS_ORIGINS: list.refine(
    (origins) => origins.every((origin) => origin === '*' || /^https?:\/\/[^/\s]+$/i.test(origin)),
    'must be origins such as https://app.example or http://localhost:* (no path, no trailing slash), or *',
  ),
  TRUST_PROXY: trustProxy.default(false),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'must be a size such as 512kb or 1mb')
    .default('1mb'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_ISSUER: z.string().min(1).default('content-platform'),
  JWT_AUDIENCE: z.string().min(1).default('content-platform-api'),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt.max(86_400).default(900),
  REFRESH_TOKEN_TTL_SECONDS: positiveInt.default(30 * 86_400),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).default('Content Platform <no-reply@localhost>'),
  CONTACT_TO: z.email().optional(),
  CONTACT_MAX_LINKS: z.coerce.number().int().min(0).default(3),
  OAUTH_GOOGLE_ISSUER: z.url().default('https://accounts.google.com'),
  OAUTH_GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_GITHUB_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_GITHUB_BASE_URL: z.url().default('https://github.com'),
  OAUTH_GITHUB_API_URL: z.url().default('https://api.github.com'),
  OAUTH_REDIRECT_URI: z.url().optional(),
  RATE_LIMIT_AUTH_PER_IP: positiveInt.default(60),
  RATE_LIMIT_AUTH_PER_ACCOUNT: positiveInt.default(10),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt.default(900),
  RATE_LIMIT_CONTACT_PER_IP: positiveInt.default(5),
  RATE_LIMIT_CONTACT_WINDOW_SECONDS: positiveInt.default(3600),
  // Every request: per IP without a valid access token, per token with one, job submits per tenant (each per window).
  RATE_LIMIT_PER_IP: positiveInt.default(600),
  RATE_LIMIT_PER_TOKEN: positiveInt.default(1200),
  RATE_LIMIT_JOBS_PER_TENANT: positiveInt.default(120),
  RATE_LIMIT_REQUEST_WINDOW_SECONDS: positiveInt.default(60),
  // Failed webhook signatures per IP, in the credential window (RATE_LIMIT_WINDOW_SECONDS).
  RATE_LIMIT_WEBHOOK_FAILURES_PER_IP: positiveInt.default(20),
  // How often each process hands its request counts to the shared store.
  RATE_LIMIT_SYNC_MS: positiveInt.default(1000),
  STATS_FLUSH_SECONDS: positiveInt.max(3600).default(60),
  // Request and view statistics are kept long enough for the 12-month report.
  STATS_RETENTION_DAYS: positiveInt.min(31).default(400),
  // Security signals, sign-up screenings and contact messages.
  SECURITY_RETENTION_DAYS: positiveInt.default(90),
  // Content history: saved (not published) versions of elements and pages are kept this long (drafts, issue 41).
  CONTENT_SAVE_VERSIONS_DAYS: positiveInt.default(30),
  STATS_COUNTING: bool.default(true),
  SIGNUP_MAX_PER_IP: positiveInt.default(5),
  SIGNUP_MAX_PER_NETWORK: positiveInt.default(10),
  SIGNUP_WINDOW_SECONDS: positiveInt.default(3600),
  SIGNUP_BURST_COUNT: positiveInt.default(3),
  SIGNUP_BURST_SECONDS: positiveInt.default(600),
  SIGNUP_FLAG_SCORE: positiveInt.default(40),
  STRIPE_SECRET_KEY: z.string().min(8).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(8).optional(),
  STRIPE_API_URL: z.url().default('https://api.stripe.com'),
  PAYMENTS_RETURN_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim().replace(/\/$/, ''))
        .filter(Boolean),
    ),
  ADMIN_EMAIL: z.email().optional(),
  ADMIN_PASSWORD: z.string().min(10, 'must be at least 10 characters').optional(),
});

export type Config = ReturnType<typeof loadConfig>;

/** Every variable read; the table of docs/configuration.md is checked against this list. */
export const configVariables = Object.keys(envSchema.shape);

/** Raised when the environment is invalid; its message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const localAdmin = { email: 'admin@example.com', password: 'change-me-now' };

export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  // An empty variable means "unset": compose files and shells often export VAR=.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const value = env[name];
      const shown = value === undefined || /PASSWORD|SECRET|KEY/.test(name) ? '' : ` (got ${JSON.stringify(value)})`;
      return `  ${name}: ${issue.message}${shown}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const values = parsed.data;
  const production = values.NODE_ENV === 'production';
  const { providers, problems } = readProviders(present, {
    publicUrl: values.PUBLIC_URL,
    timeoutMs: values.AI_TIMEOUT_MS,
  });
  if (problems.length)
    throw new ConfigError(`Invalid configuration:\n${problems.map((line) => `  ${line}`).join('\n')}`);
  const dataDir = path.resolve(values.DATA_DIR);
  const mediaDir = path.join(dataDir, 'media');
  return {
    env: values.NODE_ENV,
    production,
    host: values.HOST,
    port: values.PORT,
    publicUrl: values.PUBLIC_URL?.replace(/\/$/, ''),
    logLevel: values.LOG_LEVEL,
    databaseUrl: values.DATABASE_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    databaseAppRole: values.DATABASE_APP_ROLE,
    databaseRead: values.DATABASE_READ_URL
      ? { url: values.DATABASE_READ_URL, maxLagMs: values.DATABASE_READ_MAX_LAG_MS }
      : undefined,
    accessCache: { ttlSeconds: values.ACCESS_CACHE_SECONDS, maxEntries: values.ACCESS_CACHE_MAX_ENTRIES },
    publicCache: {
      ttlSeconds: values.PUBLIC_CACHE_SECONDS,
      maxEntries: values.PUBLIC_CACHE_MAX_ENTRIES,
      maxAge: values.PUBLIC_MAX_AGE,
      staleWhileRevalidate: values.PUBLIC_STALE_WHILE_REVALIDATE,
    },
    searchMemory: { maxBytes: values.SEARCH_MEMORY_MB * 1024 * 1024, minDocuments: values.SEARCH_MEMORY_MIN_DOCUMENTS },
    dataDir,
    mediaDir,
    stripe: {
      secretKey: values.STRIPE_SECRET_KEY,
      webhookSecret: values.STRIPE_WEBHOOK_SECRET,
      apiUrl: values.STRIPE_API_URL,
      returnOrigins: values.PAYMENTS_RETURN_ORIGINS,
    },
    redisUrl: values.REDIS_URL,
    worker: {
      concurrency: values.WORKER_CONCURRENCY,
      kinds: values.WORKER_KINDS,
      pollIntervalMs: values.WORKER_POLL_INTERVAL_MS,
      shutdownGraceMs: values.WORKER_SHUTDOWN_GRACE_MS,
      heartbeatMs: values.WORKER_HEARTBEAT_MS,
      lostAfterMs: values.WORKER_LOST_AFTER_MS,
    },
    jobs: {
      tenantConcurrency: values.JOB_TENANT_CONCURRENCY,
      maxAttempts: values.JOB_MAX_ATTEMPTS,
      retentionDays: values.JOB_RETENTION_DAYS,
      waitingHours: values.JOB_WAITING_HOURS,
    },
    webhooks: {
      httpHosts: values.JOB_WEBHOOK_HTTP_HOSTS.map((host) => host.toLowerCase()),
      timeoutMs: values.JOB_WEBHOOK_TIMEOUT_MS,
      retrySeconds: values.JOB_WEBHOOK_RETRY_SECONDS,
    },
    speech: { maxCharacters: values.SPEECH_MAX_CHARACTERS },
    ai: { timeoutMs: values.AI_TIMEOUT_MS },
    video: { renderTimeoutMs: values.VIDEO_RENDER_TIMEOUT_MS },
    providers,
    knowledge: {
      chunkTokens: values.KNOWLEDGE_CHUNK_TOKENS,
      overlapTokens:
        values.KNOWLEDGE_CHUNK_OVERLAP * 2 > values.KNOWLEDGE_CHUNK_TOKENS
          ? missing('KNOWLEDGE_CHUNK_OVERLAP', 'must be at most half of KNOWLEDGE_CHUNK_TOKENS')
          : values.KNOWLEDGE_CHUNK_OVERLAP,
    },
    binaries: { espeak: values.ESPEAK_PATH, ffmpeg: values.FFMPEG_PATH, ffprobe: values.FFPROBE_PATH },
    storage:
      values.STORAGE_DRIVER === 's3'
        ? {
            driver: 's3' as const,
            bucket: values.S3_BUCKET ?? missing('S3_BUCKET', 'required when STORAGE_DRIVER=s3'),
            region: values.S3_REGION,
            endpoint: values.S3_ENDPOINT,
            forcePathStyle: values.S3_FORCE_PATH_STYLE,
            accessKeyId: values.S3_ACCESS_KEY_ID,
            secretAccessKey: values.S3_SECRET_ACCESS_KEY,
            redirectSeconds: values.S3_REDIRECT_SECONDS,
          }
        : { driver: 'local' as const, root: mediaDir },
    media: {
      maxUploadBytes: values.MEDIA_MAX_UPLOAD_BYTES,
      maxPixels: values.MEDIA_MAX_PIXELS,
      exifGps: values.MEDIA_EXIF_GPS,
    },
    // What fetching a user-given URL may reach (core/net/safe-fetch.ts).
    fetch: {
      allowLoopback:
        values.FETCH_ALLOW_LOOPBACK && production
          ? missing('FETCH_ALLOW_LOOPBACK', 'must not be true in production: it lets user-given URLs reach this host')
          : values.FETCH_ALLOW_LOOPBACK,
    },
    pdf: {
      maxBytes: values.PDF_MAX_BYTES,
      maxPages: values.PDF_MAX_PAGES,
      timeoutMs: values.PDF_TIMEOUT_MS,
      memoryMb: values.PDF_MEMORY_MB,
    },
    metricsToken: values.METRICS_TOKEN,
    workerMetricsPort: values.WORKER_METRICS_PORT,
    shutdownTimeoutMs: values.SHUTDOWN_TIMEOUT_MS,
    // Outside production a browser app on any local port may read the API with nothing set (api/middleware/cors.ts).
    corsOrigins: values.CORS_ORIGINS.length > 0 || production ? values.CORS_ORIGINS : localOrigins,
    trustProxy: values.TRUST_PROXY,
    bodyLimit: values.BODY_LIMIT,
    auth: {
      // Outside production a fixed development secret keeps local tokens valid
      // across restarts; production refuses to start without a real one.
      jwtSecret:
        values.JWT_SECRET ??
        (production
          ? missing('JWT_SECRET', 'required in production')
          : 'development-only-secret-do-not-use-in-production'),
      issuer: values.JWT_ISSUER,
      audience: values.JWT_AUDIENCE,
      accessTokenTtlSeconds: values.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: values.REFRESH_TOKEN_TTL_SECONDS,
    },
    mail: { smtpUrl: values.SMTP_URL, from: values.MAIL_FROM },
    contact: { to: values.CONTACT_TO, maxLinks: values.CONTACT_MAX_LINKS },
    statsFlushSeconds: values.STATS_FLUSH_SECONDS,
    retention: {
      statsDays: values.STATS_RETENTION_DAYS,
      securityDays: values.SECURITY_RETENTION_DAYS,
      contentSaveDays: values.CONTENT_SAVE_VERSIONS_DAYS, // drafts: content history's saves
    },
    statsCounting: values.STATS_COUNTING,
    signupScreening: {
      perIp: values.SIGNUP_MAX_PER_IP,
      perNetwork: values.SIGNUP_MAX_PER_NETWORK,
      windowSeconds: values.SIGNUP_WINDOW_SECONDS,
      burstCount: values.SIGNUP_BURST_COUNT,
      burstSeconds: values.SIGNUP_BURST_SECONDS,
      flagScore: values.SIGNUP_FLAG_SCORE,
    },
    oauth: {
      redirectUri: values.OAUTH_REDIRECT_URI,
      google: values.OAUTH_GOOGLE_CLIENT_ID
        ? {
            issuer: values.OAUTH_GOOGLE_ISSUER,
            clientId: values.OAUTH_GOOGLE_CLIENT_ID,
            clientSecret: values.OAUTH_GOOGLE_CLIENT_SECRET,
          }
        : undefined,
      github: values.OAUTH_GITHUB_CLIENT_ID
        ? {
            clientId: values.OAUTH_GITHUB_CLIENT_ID,
            clientSecret: values.OAUTH_GITHUB_CLIENT_SECRET,
            baseUrl: values.OAUTH_GITHUB_BASE_URL.replace(/\/$/, ''),
            apiUrl: values.OAUTH_GITHUB_API_URL.replace(/\/$/, ''),
          }
        : undefined,
    },
    rateLimits: {
      perIp: values.RATE_LIMIT_AUTH_PER_IP,
      perAccount: values.RATE_LIMIT_AUTH_PER_ACCOUNT,
      windowSeconds: values.RATE_LIMIT_WINDOW_SECONDS,
      contact: { points: values.RATE_LIMIT_CONTACT_PER_IP, seconds: values.RATE_LIMIT_CONTACT_WINDOW_SECONDS },
      requests: {
        perIp: values.RATE_LIMIT_PER_IP,
        perToken: values.RATE_LIMIT_PER_TOKEN,
        jobsPerTenant: values.RATE_LIMIT_JOBS_PER_TENANT,
        windowSeconds: values.RATE_LIMIT_REQUEST_WINDOW_SECONDS,
        webhookFailuresPerIp: values.RATE_LIMIT_WEBHOOK_FAILURES_PER_IP,
        syncMs: values.RATE_LIMIT_SYNC_MS,
      },
    },
    // Outside production a missing admin falls back to printed local defaults;
    // in production no default credentials are ever created.
    admin:
      values.ADMIN_EMAIL && values.ADMIN_PASSWORD
        ? { email: values.ADMIN_EMAIL, password: values.ADMIN_PASSWORD, isDefault: false }
        : production
          ? undefined
          : {
              email: values.ADMIN_EMAIL ?? localAdmin.email,
              password: values.ADMIN_PASSWORD ?? localAdmin.password,
              isDefault: true,
            },
  };
}

function missing(name: string, why: string): never {
  throw new ConfigError(`Invalid configuration:\n  ${name}: ${why}`);
}

/** The database URL, or a clear stop when a process that needs one has none. */
export function requireDatabaseUrl(config: Config): string {
  if (!config.databaseUrl) {
    throw new ConfigError(
      'Invalid configuration:\n  DATABASE_URL: required for this command (npm start runs an embedded PostgreSQL instead)',
    );
  }
  return config.databaseUrl;
}
