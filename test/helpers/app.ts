// The API for a test file: its own cloned database, the real app, no network
// listener (supertest drives it directly).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, type App, type AppOptions } from '../../api/app.ts';
import { allEndpoints } from '../../api/manifest.ts';
import { routesByKey } from '../../api/mount.ts';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { allRoutes } from '../../api/all-routes.ts';
import { closeServices, createServices } from '../../core/boot.ts';
import { loadConfig, type Config } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import type { Services } from '../../core/services.ts';
import { contractChecker } from './contract.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export type TestApp = { app: App; services: Services; database: TestDatabase; config: Config };

export function testConfig(env: Record<string, string> = {}): Config {
  // Limits high enough that only the tests about rate limiting meet them.
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_AUTH_PER_IP: '100000',
    RATE_LIMIT_AUTH_PER_ACCOUNT: '100000',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_TOKEN: '1000000',
    RATE_LIMIT_JOBS_PER_TENANT: '1000000',
    SIGNUP_MAX_PER_IP: '100000',
    SIGNUP_MAX_PER_NETWORK: '100000',
    // The local stand-ins are free unless the operator prices them (core/providers/prices.ts). The tests price
    // them as the job kinds are priced, so what the ledger tests see is what a vendor's job would be charged;
    // test/api/providers/prices.test.ts checks the defaults.
    LOCAL_IMAGE_PRICES: 'local=10',
    LOCAL_IMAGE_EDIT_PRICES: 'local=10',
    LOCAL_VIDEO_PRICES: 'local=5',
    LOCAL_SPEECH_PRICES: 'local=1',
    LOCAL_TEXT_PRICES: 'local=2',
    // Stored media go to the system's temporary folder, never into the checkout.
    DATA_DIR: path.join(os.tmpdir(), `platform-test-data-${process.pid}`),
    // TEST_DATABASE_APP_ROLE=app_user runs the tests as the role row-level security binds (migration 0034).
    ...(process.env.TEST_DATABASE_APP_ROLE ? { DATABASE_APP_ROLE: process.env.TEST_DATABASE_APP_ROLE } : {}),
    ...env,
  });
}

export async function startTestApp(options: AppOptions & { env?: Record<string, string> } = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = testConfig({ DATABASE_URL: database.url, ...options.env });
  const services = await createServices(config, database.url, createLogger(config.logLevel), 'test');
  return { app: checkedAgainstDocument(createApp(services, options), options), services, database, config };
}

/** The OpenAPI document of these endpoints, as the app serves it. */
export const buildTestDocument = (endpoints = allEndpoints, routes = allRoutes) =>
  buildOpenApiDocument(endpoints, routesByKey(endpoints, routes), { title: 'test', version: 'test' });

/**
 * The whole app's document: built once per run by the global setup, which
 * names its file in TEST_OPENAPI_DOCUMENT (test/setup/global-setup.ts), since
 * building it takes ~0.3 s and nearly every test file starts an app; built
 * here when no setup wrote it.
 */
let wholeDocument: unknown;
const documentOf = (options: AppOptions): unknown => {
  if (options.endpoints || options.routes) return buildTestDocument(options.endpoints, options.routes);
  const file = process.env.TEST_OPENAPI_DOCUMENT;
  return (wholeDocument ??= file ? JSON.parse(readFileSync(file, 'utf8')) : buildTestDocument());
};

/** The app, with every response it gives checked against the OpenAPI document it serves. */
export function checkedAgainstDocument(app: App, options: AppOptions): App {
  return contractChecker(documentOf(options) as never)(app);
}

export async function stopTestApp(testApp: TestApp | undefined): Promise<void> {
  if (!testApp) return;
  await closeServices(testApp.services);
  await testApp.database.drop();
}

/**
 * After a test changes who may do what behind the API's back (SQL on users,
 * tenants, sites...): waits until the app has heard of it, as it would have
 * before answering had the change come through the API. (Changes through any
 * API process are heard by every other within the notification's latency.)
 */
export const accessChangeHeard = (t: TestApp) => t.services.accessCache.settled();
