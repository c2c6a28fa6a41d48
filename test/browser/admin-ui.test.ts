// The admin console end to end in headless Chromium (Debian's chromium,
// driven by playwright-core): sign in, see the newest jobs first with their
// tenants' names, page to the oldest and back, filter, open a failed job,
// retry it and see it succeed live, retry the rest in bulk after a
// confirmation, watch a running job's progress bar move, preview a generated
// image and play an uploaded sound and clip, see a job's webhook deliveries,
// pause and resume a kind and a tenant, see the charts; the session renewed before
// its short-lived token expires and kept across a reload; with no CSP
// violation or console error, and no token in a URL, a cookie or (while the
// page is open) storage. Screenshots go to test-results/ (git-ignored).
// Without Chromium the browser test is skipped (install it with
// `apt-get install chromium`), except in CI, which installs it (.ci/run).
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { defineJob } from '../../worker/job.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newUser, password, type Caller } from '../helpers/factories.ts';
import { staffedTenant, type Staffed } from '../helpers/identity.ts';
import {
  giveCredits,
  newJob,
  priceTestKinds,
  readJob,
  startTestWorker,
  submitAs,
  testKinds,
  waitForJob,
} from '../helpers/jobs.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import type { User } from '../../core/identity/users.ts';
import { testClip } from '../helpers/media.ts';
import { toneWav } from '../helpers/tone.ts';

const executable = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(executable);
if (!haveChromium && process.env.CI) throw new Error(`Chromium is not at ${executable}; .ci/run installs it`);
const browserDescribe = haveChromium ? describe : describe.skip;

/** Short-lived access tokens, so the page must renew its session while the test runs. */
const tokenSeconds = 8;
/** Jobs may send their webhooks to a receiver of this test on 127.0.0.1, as test/api/jobs/webhooks.test.ts allows it. */
const webhookEnv = { FETCH_ALLOW_LOOPBACK: 'true', JOB_WEBHOOK_HTTP_HOSTS: '127.0.0.1' };

/** Polls a condition (no fixed sleeps: the machine may be slow). */
async function until(condition: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A job that moves in steps only when the test lets it (`stepsAllowed`), so
 * the test sees each position of the progress bar without racing the job.
 */
let stepsAllowed = 0;
testKinds.set(
  'test_steps',
  defineJob({
    input: z.object({}).loose(),
    async run(_input, { progress, signal }) {
      for (let step = 1; step <= 3; step++) {
        await progress(step / 4, `step ${step} of 4`);
        await until(() => stepsAllowed >= step || signal.aborted, 60_000);
      }
      return { status: 'succeeded', output: { steps: 4 }, units: 1 };
    },
  }),
);

let t: TestApp;
let server: Server;
let base: string;
/** Answers every webhook delivery 204. */
let receiver: Server;
let hookUrl: string;
beforeAll(async () => {
  t = await startTestApp({ env: { ACCESS_TOKEN_TTL_SECONDS: String(tokenSeconds), ...webhookEnv } });
  server = createServer(t.app).listen(0, '127.0.0.1');
  receiver = createServer((_req, res) => res.writeHead(204).end()).listen(0, '127.0.0.1');
  await Promise.all(
    [server, receiver].map((listening) => new Promise((resolve) => listening.once('listening', resolve))),
  );
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await Promise.all([server, receiver].map((open) => new Promise((resolve) => open.close(resolve))));
  await stopTestApp(t);
});

const modules = ['app.js', 'session.js', 'dom.js', 'detail.js', 'bulk.js', 'queue.js', 'charts.js'];

describe('serving the page', () => {
  it('serves its files with a strict CSP, and nothing else', async () => {
    await request(t.app).get('/admin/ui').expect(301).expect('Location', '/admin/ui/');
    const page = await request(t.app)
      .get('/admin/ui/')
      .expect(200)
      .expect('Content-Type', /^text\/html/);
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    // Media previews are fetched with the token and shown from blob: URLs; nothing else is let in.
    expect(csp).toContain("img-src 'self' blob:");
    expect(csp).toContain('media-src blob:');
    expect(csp).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>|style=/);
    for (const file of modules) {
      const script = await request(t.app)
        .get(`/admin/ui/${file}`)
        .expect(200)
        .expect('Content-Type', /^text\/javascript/);
      expect(script.text).not.toMatch(/\.style\b|style=|innerHTML|localStorage|document\.cookie/);
    }
    await request(t.app)
      .get('/admin/ui/style.css')
      .expect(200)
      .expect('Content-Type', /^text\/css/);
    await request(t.app).get('/admin/ui/index.html').expect(404);
    await request(t.app).get('/admin/ui/..%2Fadmin-ui.ts').expect(404);
    await request(t.app).get('/admin/ui/constructor').expect(404);
  });
});

browserDescribe('in a browser', () => {
  let browser: Browser;
  let worker: WorkerHandle;
  let page: Page;
  let admin: User;
  let staffed: Staffed;
  let flaky: string[];
  let image: string;
  let uploads: { audio: string; video: string };
  let newestFirst: readonly string[];
  const problems: string[] = [];
  const urls: string[] = [];
  const refreshes: number[] = [];
  /** Every 401 the page met: none, since it renews its token before it expires rather than after a refusal. */
  const unauthorized: string[] = [];
  const shots = path.join(import.meta.dirname, '..', '..', 'test-results');
  /** A screenshot of the whole page, or (`fullPage: false`) of the window, where a modal dialog shows. */
  const shoot = (name: string, fullPage = true) =>
    page.screenshot({ path: path.join(shots, `admin-ui-${name}.png`), fullPage });
  const shown = () =>
    page
      .locator('#jobs button[data-job]')
      .evaluateAll((buttons) =>
        buttons.map((button) => (button as unknown as { dataset: { job: string } }).dataset.job),
      );
  const filterBy = async (status: string, kind: string) => {
    await page.selectOption('select[name=status]', status);
    await page.fill('input[name=kind]', kind);
    await page.click('#filters button[type=submit]');
  };

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    await priceTestKinds(t);
    admin = await newUser(t, { is_global_admin: true });
    staffed = await staffedTenant(t);
    await giveCredits(t, staffed.site, 100, staffed.editor.user.id);
    // More jobs than a page holds (50): the newest must be on the first page, the rest one page on.
    for (let i = 0; i < 55; i++) await newJob(t, staffed.site, { kind: 'test_noop', status: 'succeeded' });
    // Spread over the last hour, with waits and run times, so the charts have a shape to draw.
    await t.services.db.query(sql.typeAlias('void')`
      with spread as (
        select id, row_number() over (order by created_at, id) as n from jobs where kind = 'test_noop'
      )
      update jobs set created_at = now() - make_interval(secs => 3600 - spread.n * 60),
                      started_at = now() - make_interval(secs => 3600 - spread.n * 60 - (spread.n % 7) * 4),
                      finished_at = now() - make_interval(secs => 3600 - spread.n * 60 - (spread.n % 7) * 4 - (spread.n % 5) * 3 - 1)
      from spread where jobs.id = spread.id`);
    worker = await startTestWorker(t, webhookEnv);
    const actor = { kind: 'user' as const, userId: staffed.editor.user.id, sessionId: 'test', isGlobalAdmin: false };
    flaky = [];
    for (let i = 0; i < 3; i++) {
      flaky.push((await submitAs(t, actor, staffed.site, { kind: 'test_flaky', input: {}, estimatedUnits: 1 })).id);
    }
    await submitAs(t, actor, staffed.site, { kind: 'test_noop', input: {}, estimatedUnits: 1 });
    for (const id of flaky) expect((await waitForJob(t, id, ['failed', 'succeeded'])).status).toBe('failed');
    // An image made by the local provider (sharp), as a client asks for one.
    const generated = await generateImage(staffed.editor);
    expect(generated.status).toBe('succeeded');
    image = generated.id;
    // A sound and a clip as an editor uploads them: their processing jobs name the media they made.
    uploads = {
      audio: await upload(staffed.editor, toneWav(1), 'tone.wav'),
      video: await upload(staffed.editor, await testClip(t.config, 1), 'clip.mp4'),
    };
    newestFirst = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
      select id from jobs order by created_at desc, id desc`);

    browser = await chromium.launch({
      executablePath: executable,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (req) => urls.push(req.url()));
    page.on('response', (res) => {
      if (res.url().endsWith('/auth/refresh-token')) refreshes.push(res.status());
      if (res.status() === 401) unauthorized.push(res.url());
      if (res.status() >= 400 && !res.url().includes('/admin/jobs/')) problems.push(`${res.status()} ${res.url()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
  });

  async function generateImage(caller: Caller) {
    const answer = await request(t.app)
      .post(`/${staffed.site.slug}/media/generate`)
      .set(caller.auth)
      .set('Prefer', 'wait=30')
      .send({ prompt: 'A lighthouse at dusk', webhook: hookUrl, webhook_events: ['start', 'completed'] });
    expect([200, 202]).toContain(answer.status);
    return waitForJob(t, answer.body.id as string, ['succeeded', 'failed']);
  }

  /** The media processing job of an upload, once it has finished. */
  async function upload(caller: Caller, file: Buffer, name: string) {
    const answer = await request(t.app)
      .post(`/${staffed.site.slug}/media/`)
      .set(caller.auth)
      .attach('file', file, name);
    expect(answer.status).toBe(201);
    const job = await waitForJob(t, answer.body.job_id as string, ['succeeded', 'failed']);
    expect(job.status).toBe('succeeded');
    return job.id;
  }

  it('signs in and shows the newest jobs first, with tenant names, and pages to the oldest and back', async () => {
    await page.goto(`${base}/admin/ui/`);
    await page.fill('input[name=username]', admin.email);
    await page.fill('input[name=password]', password);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#console:not([hidden])');
    await page.waitForSelector('#counts tbody tr');
    await page.waitForSelector('#workers tbody tr');

    const count = newestFirst.length;
    expect(count).toBeGreaterThan(50);
    await until(async () => (await shown()).length === 50);
    expect(await shown()).toEqual(newestFirst.slice(0, 50));
    expect(await page.textContent('#total')).toBe(`1–50 of ${count}`);
    expect(await page.isDisabled('#newer')).toBe(true);
    const table = (await page.textContent('#jobs tbody'))!;
    expect(table).toContain(staffed.tenant.name);
    expect(table).toContain(staffed.site.slug);
    expect(table).not.toContain(staffed.tenant.id);

    await page.click('#older');
    await until(async () => (await shown())[0] === newestFirst[50]);
    expect(await shown()).toEqual(newestFirst.slice(50));
    expect(await page.textContent('#total')).toBe(`51–${count} of ${count}`);
    expect(await page.isDisabled('#older')).toBe(true);
    await shoot('older');
    await page.click('#newer');
    await until(async () => (await shown())[0] === newestFirst[0]);
  }, 60_000);

  it('opens a failed job with its input and output, retries it and sees it succeed live', async () => {
    await filterBy('failed', 'test_flaky');
    await until(async () => (await shown()).length === 3);
    const [first] = flaky;
    await page.click(`button[data-job="${first}"]`);
    await page.waitForSelector('#detail[data-status=failed]');
    expect(await page.textContent('#attempts tbody')).toContain('provider_rejected');
    expect(await page.textContent('#detail-output')).toBe('(none yet)');
    expect(typeof JSON.parse((await page.textContent('#detail-input'))!)).toBe('object');

    await page.click('#retry');
    await page.waitForSelector('#detail[data-status=succeeded]', { timeout: 30_000 });
    expect(await page.locator('#attempts tbody tr').count()).toBe(2);
    expect(await page.isDisabled('#retry')).toBe(true);
    expect(JSON.parse((await page.textContent('#detail-output'))!)).toEqual({ attempt: 'again' });
    expect(await page.getAttribute('#progress', 'data-percent')).toBe('100');
  }, 60_000);

  it('retries the other failed jobs in bulk once the admin confirms their number', async () => {
    await until(async () => (await shown()).length === 2);
    await page.click('#bulk-retry');
    await page.waitForSelector('#bulk-dialog[open]');
    expect(await page.textContent('#bulk-question')).toBe('Retry 2 failed jobs?');
    await shoot('bulk-confirm', false);
    // Nothing changes before the confirmation.
    for (const id of flaky.slice(1)) expect((await readJob(t, id)).status).toBe('failed');
    await page.click('#bulk-confirm');
    await until(async () => (await page.textContent('#bulk-result')) === 'Retried 2.');
    for (const id of flaky.slice(1)) expect((await waitForJob(t, id, ['succeeded'])).status).toBe('succeeded');
    await until(async () => (await shown()).length === 0);
  }, 60_000);

  it('moves the progress bar with the stage as a running job reports it', async () => {
    const actor = { kind: 'user' as const, userId: staffed.editor.user.id, sessionId: 'test', isGlobalAdmin: false };
    const job = await submitAs(t, actor, staffed.site, { kind: 'test_steps', input: {}, estimatedUnits: 1 });
    await filterBy('', 'test_steps');
    await page.locator(`#jobs button[data-job="${job.id}"]`).waitFor();
    await page.click(`button[data-job="${job.id}"]`);
    const percent = () => page.getAttribute('#progress', 'data-percent');
    for (const step of [1, 2, 3]) {
      await until(async () => (await percent()) === String(step * 25), 30_000);
      expect(await page.textContent('#progress-text')).toBe(`${step * 25} % — step ${step} of 4`);
      expect(await page.textContent('#live')).toBe('live');
      if (step === 2) await shoot('progress');
      stepsAllowed = step;
    }
    await page.waitForSelector('#detail[data-status=succeeded]', { timeout: 30_000 });
    expect(await percent()).toBe('100');
  }, 90_000);

  it('previews a generated image, fetched with the token, and lists its webhook deliveries', async () => {
    await filterBy('', '');
    await page.locator(`#jobs button[data-job="${image}"]`).waitFor();
    await page.click(`button[data-job="${image}"]`);
    const preview = page.locator('#preview img');
    await preview.waitFor();
    await until(() => preview.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth > 0));
    expect(await preview.getAttribute('src')).toMatch(/^blob:/);
    // Its webhook deliveries, each answered 204 by the receiver (the detail is read again every few seconds).
    await until(async () => (await page.locator('#deliveries .delivery-succeeded').count()) === 2);
    expect(await page.textContent('#deliveries tbody')).toContain('completed');
    expect(await page.textContent('#deliveries tbody')).toContain('204');
    await shoot('preview');
  }, 60_000);

  it('plays an uploaded sound and clip in players of the page', async () => {
    type Playable = { readyState: number; controls: boolean; duration: number };
    for (const [tag, job] of [
      ['audio', uploads.audio],
      ['video', uploads.video],
    ] as const) {
      await page.click(`button[data-job="${job}"]`);
      const player = page.locator(`#preview ${tag}`);
      await player.waitFor();
      expect(await player.getAttribute('src')).toMatch(/^blob:/);
      // Its metadata loaded from the blob: the CSP let it in and the browser read the file.
      await until(() => player.evaluate((node) => (node as unknown as Playable).readyState >= 1));
      expect(await player.evaluate((node) => (node as unknown as Playable).controls)).toBe(true);
      expect(await player.evaluate((node) => Math.round((node as unknown as Playable).duration))).toBe(1);
    }
    await shoot('players');
  }, 60_000);

  it('pauses a kind of job and resumes it', async () => {
    const paused = () =>
      t.services.db.anyFirst(
        sql.type(z.object({ kind: z.string() }))`select kind from queue_pauses where kind is not null`,
      );
    await page.click('#queue-kinds button[data-kind=speech]');
    await until(async () => (await page.textContent('#queue-kinds tr[data-kind=speech]'))!.includes('paused'));
    expect(await paused()).toEqual(['speech']);
    await shoot('paused');
    await page.click('#queue-kinds button[data-kind=speech]');
    await until(async () => (await page.textContent('#queue-kinds tr[data-kind=speech]'))!.includes('running'));
    expect(await paused()).toEqual([]);

    // A tenant, from one of its jobs (the image's, open since the last test), and back from the paused tenants.
    const pausedTenants = () =>
      t.services.db.anyFirst(
        sql.type(z.object({ tenant_id: z.string() }))`select tenant_id from queue_pauses where tenant_id is not null`,
      );
    await page.click('#pause-tenant');
    await page.waitForSelector(`#queue-tenants button[data-tenant="${staffed.tenant.id}"]`);
    expect(await page.textContent('#queue-tenants')).toContain(staffed.tenant.name);
    expect(await pausedTenants()).toEqual([staffed.tenant.id]);
    await page.click(`#queue-tenants button[data-tenant="${staffed.tenant.id}"]`);
    await page.waitForSelector('#queue-tenants-panel[hidden]', { state: 'attached' });
    expect(await pausedTenants()).toEqual([]);
  }, 60_000);

  it('draws charts of the last hours from the jobs', async () => {
    await page.selectOption('#chart-hours', '1');
    await page.waitForSelector('#charts[data-hours="1"]');
    expect(await page.locator('#charts figure').count()).toBe(4);
    // The jobs of this test finished within the hour: the first chart has a line for each kind that finished.
    await until(async () => Number(await page.getAttribute('#charts figure >> nth=0', 'data-lines')) >= 3);
    expect(await page.locator('#charts svg path.line').count()).toBeGreaterThan(0);
    expect(await page.textContent('#chart-legend')).toContain('test_flaky');
    // The noop jobs waited and ran for a while: the wait and run charts draw them too.
    for (const nth of [2, 3]) {
      expect(await page.locator(`#charts figure >> nth=${nth}`).locator('path.line').count()).toBeGreaterThan(0);
    }
    await page.locator('#history').screenshot({ path: path.join(shots, 'admin-ui-charts.png') });
  }, 60_000);

  it('renews the session before the token expires, keeps it across a reload, and keeps no token where it outlives the tab', async () => {
    // The test has run past several token lifetimes with no sign-in again: each renewal answered 200.
    await until(() => refreshes.length >= 2, tokenSeconds * 3 * 1000);
    expect(refreshes.every((status) => status === 200)).toBe(true);
    expect(unauthorized).toEqual([]);
    const storage = () =>
      page.evaluate(() => {
        const { localStorage, sessionStorage } = globalThis as unknown as Record<string, { length: number }>;
        return { local: localStorage!.length, session: sessionStorage!.length };
      });
    // While the page is open the tokens are in its memory only.
    expect(await storage()).toEqual({ local: 0, session: 0 });
    expect(await page.context().cookies()).toEqual([]);

    const renewed = refreshes.length;
    await page.reload();
    await page.waitForSelector('#console:not([hidden])');
    await until(async () => (await shown()).length > 0);
    expect(await page.isVisible('#sign-in')).toBe(false);
    expect(refreshes.length).toBeGreaterThan(renewed);
    // The refresh token waited in the tab's own storage across the reload only, and was taken out again.
    expect(await storage()).toEqual({ local: 0, session: 0 });
    expect(await page.context().cookies()).toEqual([]);
    await shoot('reloaded');

    // Signing out ends the session: a reload then asks for the password.
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in:not([hidden])');
    await page.reload();
    await page.waitForSelector('#sign-in:not([hidden])');
    expect(await page.isHidden('#console')).toBe(true);

    // A tab reopened long after it was closed (the browser restores its storage) finds the token left there
    // too old to pick up, and asks for the password.
    const signedIn = await request(t.app)
      .post('/auth/login')
      .type('form')
      .send({ username: admin.email, password, grant_type: 'password' })
      .expect(200);
    await page.evaluate(
      (left) =>
        (
          globalThis as unknown as { sessionStorage: { setItem(key: string, value: string): void } }
        ).sessionStorage.setItem('admin-ui.refresh-token', JSON.stringify(left)),
      { token: signedIn.body.refresh_token as string, leftAt: Date.now() - 60_000 },
    );
    const renewals = refreshes.length;
    await page.reload({ waitUntil: 'networkidle' });
    await page.waitForSelector('#sign-in:not([hidden])');
    expect(await page.isHidden('#console')).toBe(true);
    // It did not even try the token.
    expect(refreshes.length).toBe(renewals);
    expect(await storage()).toEqual({ local: 0, session: 0 });

    const token = (
      await request(t.app)
        .post('/auth/login')
        .type('form')
        .send({ username: admin.email, password, grant_type: 'password' })
    ).body.access_token as string;
    const signature = token.split('.')[2]!;
    expect(urls.filter((url) => url.includes('eyJ') || url.includes(signature))).toEqual([]);
    expect(problems).toEqual([]);
  }, 90_000);
});
