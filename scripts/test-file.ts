// The long runs of tests that `npm test` runs bounded (`npm run fuzz`,
// `npm run kills`): the same test file under Jest, for its cloned database
// and fakes, with no per-test timeout; the process exits with Jest's status.
import { spawnSync } from 'node:child_process';

export function runTestFile(file: string, env: Record<string, string>): never {
  const jest = spawnSync(
    process.execPath,
    [
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
      'node_modules/jest/bin/jest.js',
      '--testTimeout=0',
      file,
    ],
    { stdio: 'inherit', env },
  );
  process.exit(jest.status ?? 1);
}
