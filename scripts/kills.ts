// `npm run kills -- [--kills N] [--seed N]`: the long run of the kill test
// (test/worker/kills.test.ts, whose bounded run of 10 kills is part of
// `npm test`): 100 SIGKILLs of worker processes at random moments by default,
// a new seed each run unless one is given. The same test file under Jest, for
// its cloned database and fakes; it prints its figures.
import { parseArgs } from 'node:util';
import { runTestFile } from './test-file.ts';

const { values } = parseArgs({ options: { kills: { type: 'string' }, seed: { type: 'string' } } });
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  KILLS: values.kills ?? process.env.KILLS ?? '100',
  KILLS_SEED: values.seed ?? process.env.KILLS_SEED ?? String(Date.now() % 2 ** 31),
  KILLS_REPORT: '1',
};
process.stdout.write(`${env.KILLS} kills with seed ${env.KILLS_SEED}\n`);
runTestFile('test/worker/kills.test.ts', env);
