// `npm run kills -- [--kills N] [--seed N] [--only speech|agents]`: the long
// runs of the kill tests, whose bounded runs are part of `npm test`:
// test/worker/kills.test.ts (speech jobs, 6 kills there) and
// test/worker/agent-kills.test.ts (agent runs whose steps write, 4 kills
// there). 100 SIGKILLs of worker processes each by default, a new seed each
// run unless one is given. Each file under Jest in turn (never side by side:
// each measures how its kills are recovered from), for its cloned database
// and fakes; each prints its figures. Exits with the first failure's status.
import { testFileStatus } from './test-file.ts';
import { parseArgs } from 'node:util';

const files = { speech: 'test/worker/kills.test.ts', agents: 'test/worker/agent-kills.test.ts' };

const { values } = parseArgs({
  options: { kills: { type: 'string' }, seed: { type: 'string' }, only: { type: 'string' } },
});
if (values.only !== undefined && !(values.only in files)) {
  process.stderr.write(`--only takes ${Object.keys(files).join(' or ')}, not ${values.only}\n`);
  process.exit(2);
}
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  KILLS: values.kills ?? process.env.KILLS ?? '100',
  KILLS_SEED: values.seed ?? process.env.KILLS_SEED ?? String(Date.now() % 2 ** 31),
  KILLS_REPORT: '1',
};
process.stdout.write(`${env.KILLS} kills with seed ${env.KILLS_SEED}\n`);
let status = 0;
for (const [name, file] of Object.entries(files)) {
  if (values.only !== undefined && values.only !== name) continue;
  // One file after the other, every one run; the status of the first that failed kept.
  const ran = testFileStatus(file, env);
  status ||= ran;
}
process.exit(status);
