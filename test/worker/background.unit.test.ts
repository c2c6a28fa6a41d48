// A job's background writes (worker/background.ts): each lane in order,
// lanes side by side, the latest report replacing one not yet out, a
// throttled lane writing now and then and dropping what waits at the end, and
// a required write's failure kept for the run while others are only logged.
import { Background } from '../../worker/background.ts';
import type { Logger } from '../../core/logger.ts';

function recordingLogger() {
  const warnings: unknown[] = [];
  const logger = { warn: (fields: unknown) => void warnings.push(fields) } as unknown as Logger;
  return { logger, warnings };
}

/** A write that waits for `release()`, recording when it begins and ends. */
function heldWrite(log: string[], name: string) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    write: async () => {
      log.push(`${name} began`);
      await released;
      log.push(`${name} ended`);
    },
    release: () => release(),
  };
}

it('keeps each lane in order and runs lanes side by side', async () => {
  const background = new Background(recordingLogger().logger);
  const log: string[] = [];
  const first = heldWrite(log, 'a1');
  background.add('a', first.write);
  background.add('a', async () => void log.push('a2'));
  background.add('b', async () => void log.push('b1'));
  await new Promise((resolve) => setImmediate(resolve));
  // b1 went out while a1 was held; a2 waits for a1.
  expect(log).toEqual(['a1 began', 'b1']);
  first.release();
  await background.done();
  expect(log).toEqual(['a1 began', 'b1', 'a1 ended', 'a2']);
});

it('writes only the latest of the reports that pile up behind one going out', async () => {
  const background = new Background(recordingLogger().logger);
  const log: string[] = [];
  const first = heldWrite(log, 'first');
  background.latest('progress', first.write);
  await new Promise((resolve) => setImmediate(resolve));
  for (let i = 1; i <= 1000; i++) background.latest('progress', async () => void log.push(`report ${i}`));
  first.release();
  await background.done();
  expect(log).toEqual(['first began', 'first ended', 'report 1000']);
});

it('writes a throttled lane at most once an interval, and drops what still waits when the job ends', async () => {
  const background = new Background(recordingLogger().logger);
  const written: string[] = [];
  const report = (stage: string) => background.latest('progress', async () => void written.push(stage), 60_000);
  report('step 1');
  await new Promise((resolve) => setImmediate(resolve));
  report('step 2');
  report('step 3');
  await background.done();
  // The first went out at once; the others waited for a minute that the job's end cut short.
  expect(written).toEqual(['step 1']);

  const quick = new Background(recordingLogger().logger);
  const seen: string[] = [];
  quick.latest('progress', async () => void seen.push('a'), 30);
  await new Promise((resolve) => setImmediate(resolve));
  quick.latest('progress', async () => void seen.push('b'), 30);
  quick.latest('progress', async () => void seen.push('c'), 30);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await quick.done();
  // Given the time, the latest one waiting goes out.
  expect(seen).toEqual(['a', 'c']);
});

it('keeps a required write’s failure for the run, and only logs the others', async () => {
  const { logger, warnings } = recordingLogger();
  const background = new Background(logger);
  background.add('events', () => Promise.reject(new Error('notification lost')));
  await background.done();
  expect(background.failure).toBeUndefined();
  expect(warnings).toHaveLength(1);

  const broken = new Error('step not recorded');
  background.add('steps', () => Promise.reject(broken), { required: true });
  await background.done();
  expect(background.failure).toBe(broken);
  expect(warnings).toHaveLength(1);
});
