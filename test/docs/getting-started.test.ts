// docs/getting-started.md, run as a reader would run it: every request of
// its ```sh blocks in order, against the app listening on a real port with a
// worker beside it, the bootstrap admin made as `npm start` makes it. Each
// answer must have the status and the shape the page shows, so the page
// cannot drift from the API it walks through.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureAdmin } from '../../core/boot.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { startTestWorker } from '../helpers/jobs.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { curlRequest, differences, pick, stepsOf, words, type CurlRequest, type Step } from './walkthrough.ts';

const page = path.join(import.meta.dirname, '../../docs/getting-started.md');

let t: TestApp;
let server: http.Server;
let worker: WorkerHandle;
let base: string;
let dir: string;
beforeAll(async () => {
  // The prices of a fresh `npm start`: the local stand-ins are free unless the operator prices them.
  const unpriced = ['IMAGE', 'IMAGE_EDIT', 'VIDEO', 'SPEECH', 'TEXT'].map((kind) => [`LOCAL_${kind}_PRICES`, '']);
  t = await startTestApp({ env: Object.fromEntries(unpriced) });
  await ensureAdmin(t.services);
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  worker = await startTestWorker(t);
  dir = mkdtempSync(path.join(os.tmpdir(), 'getting-started-'));
});
afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => server?.close(resolve));
  await stopTestApp(t);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; contentType: string; body: Buffer; printed: string };

async function send(request: CurlRequest): Promise<Answer> {
  let body: string | FormData | undefined = request.data;
  if (request.form) {
    const form = new FormData();
    for (const [name, value] of request.form) {
      if (value.startsWith('@')) {
        const file = value.slice(1);
        form.append(name, new Blob([readFileSync(path.join(dir, file))]), file);
      } else form.append(name, value);
    }
    body = form;
  }
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: body ?? null });
  const answer = {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: Buffer.from(await response.arrayBuffer()),
  };
  if (request.output) writeFileSync(path.join(dir, request.output), answer.body);
  const printed =
    (request.output ? '' : answer.body.toString('utf8')) +
    (request.writeOut ?? '')
      .replaceAll('%{http_code}', String(answer.status))
      .replaceAll('%{content_type}', answer.contentType)
      .replaceAll('\\n', '\n');
  return { ...answer, printed };
}

/** Runs a step's commands; the last request's answer. */
async function run(step: Step, vars: Record<string, string>): Promise<Answer | undefined> {
  let last: Answer | undefined;
  for (const command of step.commands) {
    const kept = /^([A-Z_][A-Z0-9_]*)=\$\(jq -r (\S+) answer\.json\)$/.exec(command);
    const assigned = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(command);
    const decoded = /^echo '([A-Za-z0-9+/=]+)' \| base64 -d > ([\w.-]+)$/.exec(command);
    if (kept) {
      const value = pick(JSON.parse(readFileSync(path.join(dir, 'answer.json'), 'utf8')), kept[2]!);
      if (typeof value !== 'string') throw new Error(`line ${step.line}: ${kept[2]} is ${JSON.stringify(value)}`);
      vars[kept[1]!] = value;
    } else if (assigned) {
      // The reader's BASE is their own server; the test's is the app it started.
      if (assigned[1] !== 'BASE') vars[assigned[1]!] = words(assigned[2]!, vars).join(' ');
    } else if (decoded) {
      writeFileSync(path.join(dir, decoded[2]!), Buffer.from(decoded[1]!, 'base64'));
    } else if (command.startsWith('curl ')) {
      const teed = / \| tee answer\.json$/.test(command);
      last = await send(curlRequest(words(command.replace(/ \| tee answer\.json$/, ''), vars)));
      if (teed) writeFileSync(path.join(dir, 'answer.json'), last.body);
    } else {
      throw new Error(`line ${step.line}: the test does not know how to run: ${command}`);
    }
  }
  return last;
}

const unfinished = ['queued', 'running', 'waiting'];

/** A job the page shows finished, still under way here: its request is sent again (it waits with Prefer: wait). */
function stillRunning(step: Step, answer: Answer): boolean {
  if (!step.answer || !('json' in step.answer)) return false;
  const shown = (step.answer.json as { status?: unknown }).status;
  if (typeof shown !== 'string' || unfinished.includes(shown) || !answer.contentType.includes('json')) return false;
  return unfinished.includes((JSON.parse(answer.body.toString('utf8')) as { status?: string }).status ?? '');
}

it('runs every request of the walkthrough and gets the answers it shows', async () => {
  const steps = stepsOf(readFileSync(page, 'utf8'));
  const requests = steps.filter((step) => step.commands.some((command) => command.startsWith('curl ')));
  expect(requests.length).toBeGreaterThanOrEqual(15);
  const vars: Record<string, string> = { BASE: base };
  for (const step of steps) {
    let answer = await run(step, vars);
    const deadline = Date.now() + 60_000;
    while (answer && stillRunning(step, answer) && Date.now() < deadline) answer = await run(step, vars);
    if (!answer) continue;
    const where = `docs/getting-started.md line ${step.line}`;
    const expected = step.status ?? 200;
    if (answer.status !== expected) {
      throw new Error(`${where}: ${answer.status} instead of ${expected}: ${answer.body.toString('utf8')}`);
    }
    if (!step.answer) continue;
    if ('json' in step.answer) {
      const found = differences(step.answer.json, JSON.parse(answer.body.toString('utf8')));
      if (found.length) throw new Error(`${where}: the answer differs from the page's\n  ${found.join('\n  ')}`);
    } else {
      expect(`${where}\n${answer.printed.trim()}`).toBe(`${where}\n${step.answer.text.trim()}`);
    }
  }
});

it('reads the page as the test runs it', () => {
  const [step] = stepsOf(
    [
      '```sh',
      'curl -s $BASE/x \\',
      "  -H 'A: b' | tee answer.json",
      'X=$(jq -r .id answer.json)',
      '```',
      'Answers `201 Created`:',
      '```json',
      '{"id": "1"}',
      '```',
    ].join('\n'),
  );
  expect(step).toEqual({
    line: 1,
    commands: ["curl -s $BASE/x -H 'A: b' | tee answer.json", 'X=$(jq -r .id answer.json)'],
    status: 201,
    answer: { json: { id: '1' } },
  });
  expect(words(`curl -d '{"a": "$X"}' "$BASE/y" -H "B: $X"`, { X: 'x', BASE: 'http://h' })).toEqual([
    'curl',
    '-d',
    '{"a": "$X"}',
    'http://h/y',
    '-H',
    'B: x',
  ]);
  expect(
    differences(
      { id: '0b7e1c52-94d3-4c2b-9a59-0c1f4a2b7e11', n: 1, s: 'eyJ…' },
      { id: 'f1d307ea-371a-495a-a3fc-99962cf9ae32', n: 1, s: 'eyJabc', more: true },
    ),
  ).toEqual([]);
  expect(differences({ status: 'succeeded', list: [{ a: 1 }] }, { status: 'failed', list: [] })).toEqual([
    '$.status: expected "succeeded", got "failed"',
    '$.list: expected at least 1 items, got 0',
  ]);
});
