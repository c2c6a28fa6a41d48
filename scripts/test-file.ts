// The long runs of tests that `npm test` runs bounded (`npm run fuzz`,
// `npm run kills`): the same test file under Jest, for its cloned database
// and fakes, with no per-test timeout.
import { spawnSync } from 'node:child_process';

/** Runs the file under Jest and answers Jest's exit status: for a script that runs several. */
export function testFileStatus(file: string, env: Record<string, string>): number {
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
  return jest.status ?? 1;
}

/** Runs the file under Jest; the process exits with Jest's status. */
export function runTestFile(file: string, env: Record<string, string>): never {
  process.exit(testFileStatus(file, env));
}
