// Sign-up, verification and password reset, with e-mail delivered by the
// worker to a real SMTP server on 127.0.0.1.
import request from 'supertest';
import { z } from 'zod';
import { createLogger } from '../../../core/logger.ts';
import { sql } from '../../../db/pool.ts';
import { startWorker, type WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { login, newUser, password } from '../../helpers/factories.ts';
import { startFakeSmtp, tokenIn, waitForMail, type FakeSmtp } from '../../helpers/smtp.ts';
import { pollUntil } from '../../helpers/poll.ts';

let t: TestApp;
let smtp: FakeSmtp;
let worker: WorkerHandle;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, WORKER_POLL_INTERVAL_MS: '200' } });
  worker = await startWorker({
    databaseUrl: t.database.url,
    config: t.config,
    db: t.services.db,
    logger: createLogger('silent'),
    crontab: '',
  });
});
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
  await smtp.close();
});

let n = 0;
const address = () => `signup-${Date.now()}-${n++}@example.com`;

async function signUp(email = address()) {
  const res = await request(t.app)
    .post('/auth/signup/')
    .send({ email, password, full_name: 'Ada Lovelace' })
    .expect(201);
  return { email, body: res.body };
}

describe('POST /auth/signup/', () => {
  it('creates an unverified user who administers a new tenant, and e-mails a link', async () => {
    const { email, body } = await signUp();
    expect(body.user).toMatchObject({
      email,
      full_name: 'Ada Lovelace',
      email_verified: false,
      is_global_admin: false,
    });
    expect(body.tenant).toMatchObject({
      name: "Ada Lovelace's workspace",
      slug: expect.stringMatching(/^ada-lovelace-s-workspace(-\d+)?$/),
    });
    const role = await t.services.db.oneFirst(sql.type(z.object({ role: z.string() }))`
      select role from memberships where user_id = ${body.user.id} and tenant_id = ${body.tenant.id}`);
    expect(role).toBe('admin');
    const mail = await waitForMail(smtp, email);
    expect(mail.raw).toMatch(/Subject: Confirm your e-mail address/);
    expect(tokenIn(mail).split('.')).toHaveLength(3);
  });

  it('cannot sign in before verifying, and can after', async () => {
    const { email } = await signUp();
    const refused = await request(t.app).post('/auth/login').send({ username: email, password }).expect(403);
    expect(refused.body.type).toBe('/problems/email-not-verified');
    await request(t.app)
      .post('/auth/signup/verify-email')
      .send({ token: tokenIn(await waitForMail(smtp, email)) })
      .expect(204);
    await login(t, email);
  });

  it('refuses a taken address with 409 and a short password with 422', async () => {
    const { email } = await signUp();
    await request(t.app).post('/auth/signup/').send({ email, password, full_name: 'Again' }).expect(409);
    const short = await request(t.app)
      .post('/auth/signup/')
      .send({ email: address(), password: 'short', full_name: 'X' })
      .expect(422);
    expect(short.body.errors).toEqual([{ path: 'body.password', message: 'must be at least 10 characters' }]);
  });

  it('ignores nothing silently: unknown fields such as is_global_admin are 422', async () => {
    await request(t.app)
      .post('/auth/signup/')
      .send({ email: address(), password, full_name: 'X', is_global_admin: true })
      .expect(422);
  });
});

describe('POST /auth/signup/verify-email', () => {
  it('works once', async () => {
    const { email } = await signUp();
    const token = tokenIn(await waitForMail(smtp, email));
    await request(t.app).post('/auth/signup/verify-email').send({ token }).expect(204);
    const again = await request(t.app).post('/auth/signup/verify-email').send({ token }).expect(400);
    expect(again.body.type).toBe('/problems/invalid-link');
  });

  it('refuses a forged token and an access token', async () => {
    await request(t.app).post('/auth/signup/verify-email').send({ token: 'a.b.c-not-a-real-token' }).expect(400);
    const user = await newUser(t);
    const { access_token } = await login(t, user.email);
    await request(t.app).post('/auth/signup/verify-email').send({ token: access_token }).expect(400);
  });

  it('refuses an expired token', async () => {
    const { email } = await signUp();
    const token = tokenIn(await waitForMail(smtp, email));
    await t.services.db.query(sql.typeAlias('void')`update email_tokens set expires_at = now() - interval '1 second'`);
    await request(t.app).post('/auth/signup/verify-email').send({ token }).expect(400);
  });
});

describe('POST /auth/signup/resend-verification', () => {
  it('sends a new link that replaces the old one', async () => {
    const { email } = await signUp();
    const first = tokenIn(await waitForMail(smtp, email));
    const res = await request(t.app).post('/auth/signup/resend-verification').send({ email }).expect(202);
    const second = tokenIn(await waitForMail(smtp, email, 2));
    await request(t.app).post('/auth/signup/verify-email').send({ token: first }).expect(400);
    await request(t.app).post('/auth/signup/verify-email').send({ token: second }).expect(204);
    // The same answer for an address without an account.
    const unknown = await request(t.app)
      .post('/auth/signup/resend-verification')
      .send({ email: 'nobody-here@example.com' })
      .expect(202);
    expect(unknown.body).toEqual(res.body);
  });

  it('rejects a malformed address with 422', async () => {
    await request(t.app).post('/auth/signup/resend-verification').send({ email: 'not-an-address' }).expect(422);
  });
});

describe('password reset', () => {
  it('sets a new password once and ends every session', async () => {
    const user = await newUser(t);
    const before = await login(t, user.email);
    const res = await request(t.app).post('/auth/password-reset-request').send({ email: user.email }).expect(202);
    const unknown = await request(t.app)
      .post('/auth/password-reset-request')
      .send({ email: 'nobody-here@example.com' })
      .expect(202);
    expect(unknown.body).toEqual(res.body);
    const token = tokenIn(await waitForMail(smtp, user.email));
    await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token, new_password: 'a brand new passphrase' })
      .expect(204);
    await request(t.app)
      .get('/auth/currentuser')
      .set({ Authorization: `Bearer ${before.access_token}` })
      .expect(401);
    await request(t.app).post('/auth/login').send({ username: user.email, password }).expect(401);
    await login(t, user.email, 'a brand new passphrase');
    await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token, new_password: 'yet another passphrase' })
      .expect(400);
  });

  it('refuses a verification token as a reset token', async () => {
    const { email } = await signUp();
    const token = tokenIn(await waitForMail(smtp, email));
    await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token, new_password: 'a brand new passphrase' })
      .expect(400);
  });

  it('rejects a short new password with 422', async () => {
    await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token: 'x'.repeat(20), new_password: 'short' })
      .expect(422);
  });
});

describe('without SMTP_URL', () => {
  it('keeps the message in the outbox and logs it', async () => {
    const local = await startTestApp();
    const localWorker = await startWorker({
      databaseUrl: local.database.url,
      config: local.config,
      db: local.services.db,
      logger: createLogger('silent'),
      crontab: '',
    });
    try {
      const email = address();
      await request(local.app).post('/auth/signup/').send({ email, password, full_name: 'Local' }).expect(201);
      const row = z.object({ delivered_via: z.string().nullable(), text_body: z.string() });
      const sent = await pollUntil(
        () =>
          local.services.db.maybeOne(
            sql.type(row)`select delivered_via, text_body from email_outbox where to_address = ${email}`,
          ),
        (found) => Boolean(found?.delivered_via),
        { tries: 200, everyMs: 50 },
      );
      expect(sent).toMatchObject({ delivered_via: 'log', text_body: expect.stringContaining('token: ') });
    } finally {
      await localWorker.stop();
      await stopTestApp(local);
    }
  });
});
