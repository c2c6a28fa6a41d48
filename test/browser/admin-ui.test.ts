// The admin page for the job tables, end to end in headless Chromium
// (Debian's chromium, driven by playwright-core): sign in, see the newest
// jobs first with their tenants' names, page to the oldest and back, filter,
// open a failed job, retry it and see it succeed live; with no CSP violation or
// console error, and the token never in a URL or in storage. Without
// Chromium the browser test is skipped (install it with
// `apt-get install chromium`), except in CI, which installs it (.ci/run).
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newUser, password } from '../helpers/factories.ts';
import { staffedTenant } from '../helpers/identity.ts';
import { giveCredits, newJob, priceTestKinds, startTestWorker, submitAs, waitForJob } from '../helpers/jobs.ts';
import type { WorkerHandle } from '../../worker/runner.ts';

const executable = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(executable);
if (!haveChromium && process.env.CI) throw new Error(`Chromium is not at ${executable}; .ci/run installs it`);
const browserIt = haveChromium ? it : it.skip;

/** Polls a condition of the page (no fixed sleeps: the machine may be slow). */
async function until(condition: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let t: TestApp;
let server: Server;
let base: string;
beforeAll(async () => {
  t = await startTestApp();
  server = createServer(t.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await stopTestApp(t);
});

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
    expect(csp).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>|style=/);
    await request(t.app)
      .get('/admin/ui/app.js')
      .expect(200)
      .expect('Content-Type', /^text\/javascript/);
    await request(t.app)
      .get('/admin/ui/style.css')
      .expect(200)
      .expect('Content-Type', /^text\/css/);
    await request(t.app).get('/admin/ui/index.html').expect(404);
    await request(t.app).get('/admin/ui/..%2Fadmin-ui.ts').expect(404);
    await request(t.app).get('/admin/ui/constructor').expect(404);
  });
});

describe('in a browser', () => {
  let browser: Browser | undefined;
  let worker: WorkerHandle | undefined;
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
  });

  browserIt(
    'signs in, pages the newest jobs first, filters, opens a failed job, retries it and sees it succeed',
    async () => {
      await priceTestKinds(t);
      const admin = await newUser(t, { is_global_admin: true });
      const staffed = await staffedTenant(t);
      await giveCredits(t, staffed.site, 100, staffed.editor.user.id);
      // More jobs than a page holds (50): the newest must be on the first page, the rest one page on.
      for (let i = 0; i < 55; i++) await newJob(t, staffed.site, { kind: 'test_noop', status: 'succeeded' });
      worker = await startTestWorker(t);
      const actor = { kind: 'user' as const, userId: staffed.editor.user.id, sessionId: 'test', isGlobalAdmin: false };
      const flaky = await submitAs(t, actor, staffed.site, { kind: 'test_flaky', input: {}, estimatedUnits: 1 });
      await submitAs(t, actor, staffed.site, { kind: 'test_noop', input: {}, estimatedUnits: 1 });
      expect((await waitForJob(t, flaky.id, ['failed', 'succeeded'])).status).toBe('failed');

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
      const page = await browser.newPage();
      const problems: string[] = [];
      const urls: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (req) => urls.push(req.url()));
      page.on('response', (res) => {
        if (res.status() >= 400 && !res.url().includes('/admin/jobs/')) problems.push(`${res.status()} ${res.url()}`);
      });
      await page.goto(`${base}/admin/ui/`);
      await page.fill('input[name=username]', admin.email);
      await page.fill('input[name=password]', password);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#console:not([hidden])');
      await page.waitForSelector('#counts tbody tr');
      await page.waitForSelector('#workers tbody tr');

      const newestFirst = await t.services.db.anyFirst(sql.type(z.object({ id: z.string() }))`
        select id from jobs order by created_at desc, id desc`);
      const count = newestFirst.length;
      expect(count).toBeGreaterThan(50);
      const shown = () =>
        page
          .locator('#jobs button[data-job]')
          .evaluateAll((buttons) =>
            buttons.map((button) => (button as unknown as { dataset: { job: string } }).dataset.job),
          );
      await until(async () => (await shown()).length === 50);
      expect(await shown()).toEqual(newestFirst.slice(0, 50));
      expect(await page.textContent('#total')).toBe(`1–50 of ${count}`);
      expect(await page.isDisabled('#newer')).toBe(true);
      // Tenants by name, not by id.
      const table = (await page.textContent('#jobs tbody'))!;
      expect(table).toContain(staffed.tenant.name);
      expect(table).toContain(staffed.site.slug);
      expect(table).not.toContain(staffed.tenant.id);

      await page.click('#older');
      await until(async () => (await shown())[0] === newestFirst[50]);
      expect(await shown()).toEqual(newestFirst.slice(50));
      expect(await page.textContent('#total')).toBe(`51–${count} of ${count}`);
      expect(await page.isDisabled('#older')).toBe(true);
      const shots = path.join(import.meta.dirname, '..', '..', 'test-results');
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, 'admin-ui-older.png'), fullPage: true });
      await page.click('#newer');
      await until(async () => (await shown())[0] === newestFirst[0]);

      await page.selectOption('select[name=status]', 'failed');
      await page.fill('input[name=kind]', 'test_flaky');
      await page.click('#filters button[type=submit]');
      // Only the flaky job is left in the table.
      await page.locator(`#jobs button[data-job="${flaky.id}"]`).waitFor();
      await until(async () => (await page.locator('#jobs tbody tr').count()) === 1);
      await page.click(`button[data-job="${flaky.id}"]`);
      await page.waitForSelector('#detail:not([hidden])');
      await page.waitForSelector('#detail[data-status=failed]');
      expect(await page.textContent('#attempts tbody')).toContain('provider_rejected');

      await page.click('#retry');
      await page.waitForSelector('#detail[data-status=succeeded]', { timeout: 30_000 });
      expect(await page.locator('#attempts tbody tr').count()).toBe(2);
      expect(await page.isDisabled('#retry')).toBe(true);

      await page.screenshot({ path: path.join(shots, 'admin-ui.png'), fullPage: true });

      const storage = await page.evaluate(() => {
        const { localStorage, sessionStorage } = globalThis as unknown as Record<string, { length: number }>;
        return { local: localStorage!.length, session: sessionStorage!.length };
      });
      expect(storage).toEqual({ local: 0, session: 0 });
      expect(await page.context().cookies()).toEqual([]);
      const token = (
        await request(t.app)
          .post('/auth/login')
          .type('form')
          .send({ username: admin.email, password, grant_type: 'password' })
      ).body.access_token as string;
      const signature = token.split('.')[2]!;
      expect(urls.filter((url) => url.includes('eyJ') || url.includes(signature))).toEqual([]);
      expect(problems).toEqual([]);
    },
    90_000,
  );
});
