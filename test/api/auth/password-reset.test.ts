// Password reset: what a request does (the same for every address, so its
// time tells nothing), and how long a link lives.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { login, newUser, password } from '../../helpers/factories.ts';
import { startTestWorker } from '../../helpers/jobs.ts';
import { startFakeSmtp, tokenIn, waitForMail, type FakeSmtp } from '../../helpers/smtp.ts';

let t: TestApp;
let smtp: FakeSmtp;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  t = await startTestApp({ env: { SMTP_URL: smtp.url, WORKER_POLL_INTERVAL_MS: '200' } });
});
afterAll(async () => {
  await stopTestApp(t);
  await smtp.close();
});

const count = z.object({ count: z.number() });

/** Links and messages made so far: the request itself makes none, its job does. */
const linksAndMessages = () =>
  t.services.db.oneFirst(sql.type(count)`
    select ((select count(*) from email_tokens) + (select count(*) from email_outbox))::int as count`);

/** The addresses queued for `task`, in order. */
const queuedFor = (task: string) =>
  t.services.db.anyFirst(sql.type(z.object({ email: z.string() }))`
    select j.payload->>'email' as email from graphile_worker._private_jobs j
    join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = ${task} order by j.id`);

describe.each([
  ['/auth/password-reset-request', 'password_reset__send', true],
  ['/auth/signup/resend-verification', 'email_verification__resend', false],
] as const)('POST %s', (path, task, verified) => {
  it('does the same for an address with an account as for one without: it queues one job and nothing else', async () => {
    const user = await newUser(t, { email_verified: verified });
    const before = await linksAndMessages();
    for (const email of [user.email, 'nobody-here@example.com'])
      await request(t.app).post(path).send({ email }).expect(202);
    expect(await queuedFor(task)).toEqual([user.email, 'nobody-here@example.com']);
    expect(await linksAndMessages()).toBe(before);
  });
});

describe('a reset link', () => {
  let worker: WorkerHandle;
  beforeAll(async () => {
    worker = await startTestWorker(t, { SMTP_URL: smtp.url });
  });
  afterAll(() => worker.stop());

  async function resetLink(email: string): Promise<string> {
    await request(t.app).post('/auth/password-reset-request').send({ email }).expect(202);
    return tokenIn(await waitForMail(smtp, email));
  }

  it('is mailed to an address with an account, and to no other', async () => {
    const user = await newUser(t);
    await resetLink(user.email);
    await request(t.app).post('/auth/password-reset-request').send({ email: 'no-account@example.com' }).expect(202);
    await resetLink(user.email);
    expect(smtp.messages.filter((mail) => mail.to.includes('no-account@example.com'))).toEqual([]);
  });

  it('stops working once the password is changed another way', async () => {
    const user = await newUser(t);
    const token = await resetLink(user.email);
    const { access_token } = await login(t, user.email);
    await request(t.app)
      .patch(`/users/${user.id}`)
      .set({ Authorization: `Bearer ${access_token}` })
      .send({ current_password: password, password: 'changed by the owner' })
      .expect(200);
    const res = await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token, new_password: 'set by whoever had the link' })
      .expect(400);
    expect(res.body.type).toBe('/problems/invalid-link');
    await login(t, user.email, 'changed by the owner');
  });

  it('works while the password is the one it was sent for', async () => {
    const user = await newUser(t);
    const token = await resetLink(user.email);
    await request(t.app)
      .post('/auth/password-reset-confirm')
      .send({ token, new_password: 'a brand new passphrase' })
      .expect(204);
    await login(t, user.email, 'a brand new passphrase');
  });
});
