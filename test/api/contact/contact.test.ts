// The public contact form through HTTP: kept and mailed through the outbox
// (a real SMTP server on 127.0.0.1 receives it), spam kept but not mailed,
// throwaway addresses refused, a limit per client IP; and the SMTP check,
// against servers that answer, refuse the password, or are not there.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { signedIn, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, unique } from '../../helpers/identity.ts';
import { startTestWorker } from '../../helpers/jobs.ts';
import { startFakeSmtp, waitForMail, type FakeSmtp } from '../../helpers/smtp.ts';

let t: TestApp;
let smtp: FakeSmtp;
let worker: WorkerHandle;
let admin: Caller;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  t = await startTestApp({
    env: { SMTP_URL: smtp.url, TRUST_PROXY: '1', RATE_LIMIT_CONTACT_PER_IP: '3' },
  });
  // The mail job delivers with the app's own settings (SMTP_URL).
  worker = await startTestWorker(t, { SMTP_URL: smtp.url });
  admin = await globalAdmin(t);
});
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
  await smtp.close();
});

/** Each test its own client address, so the per-IP limit is its own. */
let ips = 0;
const client = () => ({ 'X-Forwarded-For': `198.51.100.${++ips}` });

const message = (overrides: Record<string, unknown> = {}) => ({
  name: 'Ada Lovelace',
  email: `ada-${unique()}@example.org`,
  subject: 'Question about plans',
  message: 'Do you have an education discount?',
  ...overrides,
});

const stored = (id: string) =>
  t.services.db.one(sql.type(
    z.object({
      status: z.string(),
      spam_reasons: z.array(z.string()),
      site_id: z.string().nullable(),
      ip: z.string().nullable(),
    }),
  )`
    select status, spam_reasons, site_id, ip from contact_messages where id = ${id}`);

const outboxFor = (id: string) =>
  t.services.db.anyFirst(sql.type(z.object({ to_address: z.string() }))`
    select to_address from email_outbox where kind = 'contact' and text_body like ${`%${id}%`} order by to_address`);

describe('POST /api/contact', () => {
  it('keeps the message and mails it to the global admins when no site is named', async () => {
    const body = message();
    const res = await request(t.app).post('/api/contact').set(client()).send(body).expect(202);
    expect(res.body).toEqual({ id: expect.any(String), status: 'received' });
    expect(await stored(res.body.id)).toMatchObject({
      status: 'received',
      spam_reasons: [],
      site_id: null,
      ip: '198.51.100.1',
    });
    const mail = await waitForMail(smtp, admin.user.email);
    expect(mail.text).toContain(body.email);
    expect(mail.text).toContain('Do you have an education discount?');
    expect(mail.raw).toMatch(/Subject: \[Contact\] Question about plans/);
  });

  it('goes to the tenant admins of the public site it names', async () => {
    const staffed = await staffedTenant(t);
    await request(t.app)
      .patch(`/sites/${staffed.site.slug}`)
      .set(admin.auth)
      .send({ visibility: 'public' })
      .expect(200);
    const res = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ site: staffed.site.slug }))
      .expect(202);
    expect(await outboxFor(res.body.id)).toEqual([staffed.admin.user.email]);
    expect((await waitForMail(smtp, staffed.admin.user.email)).raw).toContain(staffed.site.name);
    // A site that is not public is not one to write to.
    const hidden = await staffedTenant(t);
    const refused = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ site: hidden.site.slug }))
      .expect(422);
    expect(refused.body.errors).toEqual([{ path: 'body.site', message: 'no such public site' }]);
  });

  it('keeps spam without mailing it, and answers it the same', async () => {
    const trap = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ website: 'https://cheap.example' }))
      .expect(202);
    expect(trap.body.status).toBe('received');
    expect(await stored(trap.body.id)).toMatchObject({ status: 'spam', spam_reasons: ['honeypot'] });
    const links = Array.from({ length: 4 }, (_, i) => `https://spam${i}.example/buy`).join(' ');
    const linky = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ message: `Great offers ${links}` }))
      .expect(202);
    expect(await stored(linky.body.id)).toMatchObject({ status: 'spam', spam_reasons: ['links:4'] });
    expect(await outboxFor(trap.body.id)).toEqual([]);
    expect(await outboxFor(linky.body.id)).toEqual([]);
    // A link is one link, whatever its spelling: two https://www. links are two.
    const two = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ message: 'Compare https://www.a.example/x and [url=https://www.b.example]b[/url]' }))
      .expect(202);
    expect(await stored(two.body.id)).toMatchObject({ status: 'received' });
    // Three links are within the default limit.
    const fine = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ message: 'See https://a.example, https://b.example and www.c.example' }))
      .expect(202);
    expect(await stored(fine.body.id)).toMatchObject({ status: 'received' });
  });

  it('refuses throwaway addresses and bad bodies, storing nothing', async () => {
    const before = await t.services.db.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from contact_messages`,
    );
    const throwaway = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ email: 'someone@mailinator.com' }))
      .expect(422);
    expect(throwaway.body.errors).toEqual([{ path: 'body.email', message: 'a disposable address' }]);
    await request(t.app)
      .post('/api/contact')
      .set(client())
      .send(message({ email: 'x@inbox.mailinator.com' }))
      .expect(422);
    const bad = await request(t.app)
      .post('/api/contact')
      .set(client())
      .send({ name: '', email: 'nope', subject: 'x'.repeat(201), message: '', extra: 1 })
      .expect(422);
    expect(bad.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      ['body', 'body.email', 'body.message', 'body.name', 'body.subject'].sort(),
    );
    const after = await t.services.db.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from contact_messages`,
    );
    expect(after).toBe(before);
  });

  it('limits each client address', async () => {
    const address = client();
    for (let i = 0; i < 3; i++) await request(t.app).post('/api/contact').set(address).send(message()).expect(202);
    const limited = await request(t.app).post('/api/contact').set(address).send(message()).expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held back.
    await request(t.app).post('/api/contact').set(client()).send(message()).expect(202);
  });
});

/** An SMTP server that wants a password and refuses every one. */
async function strictSmtp() {
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth: (_auth, _session, callback) => callback(new Error('Invalid username or password')),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

describe('GET /api/contact/test-smtp', () => {
  it('verifies the server and sends a test message', async () => {
    const checked = await request(t.app).get('/api/contact/test-smtp').set(admin.auth).expect(200);
    expect(checked.body).toMatchObject({ ok: true, host: '127.0.0.1', secure: false, user: null, sent_to: null });
    const to = `ops-${unique()}@example.org`;
    const sent = await request(t.app).get('/api/contact/test-smtp').query({ send_to: to }).set(admin.auth).expect(200);
    expect(sent.body.sent_to).toBe(to);
    expect((await waitForMail(smtp, to)).raw).toContain('SMTP test');
    const staffed = await staffedTenant(t);
    await request(t.app).get('/api/contact/test-smtp').set(staffed.admin.auth).expect(403);
    await request(t.app).get('/api/contact/test-smtp').expect(401);
    await request(t.app).get('/api/contact/test-smtp').query({ send_to: 'nope' }).set(admin.auth).expect(422);
  });

  it('says which stage failed, never the password', async () => {
    const strict = await strictSmtp();
    const refused = await startTestApp({ env: { SMTP_URL: `smtp://ops:s3cret-pass@127.0.0.1:${strict.port}` } });
    const closed = await startTestApp({ env: { SMTP_URL: 'smtp://127.0.0.1:9' } });
    const tls = await startTestApp({ env: { SMTP_URL: `smtps://127.0.0.1:${new URL(smtp.url).port}` } });
    const unset = await startTestApp();
    try {
      const check = async (app: TestApp, status: number) => {
        const boss = await signedIn(app, { globalAdmin: true });
        return (await request(app.app).get('/api/contact/test-smtp').set(boss.auth).expect(status)).body;
      };
      const auth = await check(refused, 502);
      expect(auth).toMatchObject({
        type: '/problems/smtp-check-failed',
        stage: 'auth',
        user: 'ops',
        port: strict.port,
      });
      expect(JSON.stringify(auth)).not.toContain('s3cret-pass');
      expect((await check(closed, 502)).stage).toBe('connect');
      expect((await check(tls, 502)).stage).toBe('tls');
      expect(await check(unset, 503)).toMatchObject({ type: '/problems/mail-not-configured', setting: 'SMTP_URL' });
    } finally {
      await Promise.all([stopTestApp(refused), stopTestApp(closed), stopTestApp(tls), stopTestApp(unset)]);
      await strict.close();
    }
  });
});
