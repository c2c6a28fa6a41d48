// One worker process of the scaling bench, started by pipeline.ts as a child:
// `platform` runs the platform's worker (claim, settle with debit and
// release, tenant slots) with a no-op job kind; `raw` runs bare
// graphile-worker with a no-op task. Says `ready` on stdout once started, and
// stops cleanly on SIGTERM. Configuration comes from the environment
// (DATABASE_URL, WORKER_CONCURRENCY, JOB_TENANT_CONCURRENCY...).
import { run } from 'graphile-worker';
import { loadConfig, requireDatabaseUrl } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { workerLogger } from '../../core/worker-logger.ts';
import { createPool } from '../../db/pool.ts';
import { startBenchWorker } from '../jobs.ts';

const noopTask = 'bench__noop';

const mode = process.argv[2];
const config = loadConfig();
const databaseUrl = requireDatabaseUrl(config);
const logger = createLogger('silent');

let stop: () => Promise<void>;
if (mode === 'platform') {
  const db = await createPool(databaseUrl, { maxPoolSize: config.worker.concurrency + 2 });
  const worker = await startBenchWorker({ databaseUrl, config, db, logger });
  stop = async () => {
    await worker.stop();
    await db.end();
  };
} else if (mode === 'raw') {
  const runner = await run({
    connectionString: databaseUrl,
    concurrency: config.worker.concurrency,
    noHandleSignals: true,
    pollInterval: config.worker.pollIntervalMs,
    logger: workerLogger(logger),
    crontab: '',
    taskList: { [noopTask]: async () => {} },
  });
  stop = () => runner.stop();
} else {
  throw new Error(`usage: worker-process.ts platform|raw (got ${mode})`);
}
process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
process.stdout.write('ready\n');
