// A second app of the test's database whose every database connection goes
// through a relay that counts round trips: what a request costs the database,
// and whether a cache answered it. Its caches listen like any process's.
import { createApp } from '../../api/app.ts';
import { closeServices, createServices } from '../../core/boot.ts';
import { createLogger } from '../../core/logger.ts';
import { testConfig, type TestApp } from './app.ts';
import { startRoundTripCounter, type RoundTripCounter } from './pg-round-trips.ts';

export type CountedApp = {
  app: ReturnType<typeof createApp>;
  counter: RoundTripCounter;
  services: Awaited<ReturnType<typeof createServices>>;
  close(): Promise<void>;
};

export async function startCountedApp(t: TestApp, env: Record<string, string> = {}): Promise<CountedApp> {
  const counter = await startRoundTripCounter(t.database.url);
  const config = testConfig({ ...env, DATABASE_URL: counter.url });
  const services = await createServices(config, counter.url, createLogger(config.logLevel), 'test');
  const app = createApp(services);
  // A cache keeps nothing until it hears changes: wait for that, however slow the machine, not a fixed time.
  const deadline = Date.now() + 20_000;
  while (!(services.publicCache.enabled && services.accessCache.enabled)) {
    if (Date.now() > deadline) throw new Error('the counted app’s caches never started listening');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return {
    app,
    counter,
    services,
    async close() {
      await closeServices(services);
      await counter.close();
    },
  };
}
