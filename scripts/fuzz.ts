// `npm run fuzz -- [--cases N | --seconds S] [--seed N] [--only 'METHOD /path']`:
// the long run of the OpenAPI fuzzer (test/fuzz/openapi-fuzz.test.ts, whose
// bounded run is part of `npm test`). The same test file under Jest, for its
// cloned database, fakes and contract check, with N drawn cases per operation
// (or S seconds shared between them) instead of one case of each kind.
// A failure prints the seeds that replay it.
import { parseArgs } from 'node:util';
import { runTestFile } from './test-file.ts';

const { values } = parseArgs({
  options: {
    cases: { type: 'string' },
    seconds: { type: 'string' },
    seed: { type: 'string' },
    only: { type: 'string' },
  },
});
const env: Record<string, string> = { ...(process.env as Record<string, string>) };
if (values.cases) env.FUZZ_CASES = values.cases;
else if (!env.FUZZ_CASES) env.FUZZ_SECONDS = values.seconds ?? env.FUZZ_SECONDS ?? '300';
// A new seed each run unless one is given; it is printed so a run can be repeated.
env.FUZZ_SEED = values.seed ?? env.FUZZ_SEED ?? String(Date.now() % 2 ** 31);
if (values.only) env.FUZZ_ONLY = values.only;
process.stdout.write(
  `fuzzing with seed ${env.FUZZ_SEED}, ${env.FUZZ_CASES ? `${env.FUZZ_CASES} cases` : `about ${env.FUZZ_SECONDS} s`} per run\n`,
);
runTestFile('test/fuzz/openapi-fuzz.test.ts', env);
