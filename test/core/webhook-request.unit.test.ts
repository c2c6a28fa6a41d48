// A refused webhook URL says which setting would allow it, so a developer
// pointing a job at a receiver on their own machine finds it at once; in
// production, where reaching this machine is never allowed, only the http one.
import { loadConfig } from '../../core/config.ts';
import type { Problem } from '../../core/errors.ts';
import { requestedWebhook } from '../../core/webhooks/request.ts';

const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };

function refusal(env: Record<string, string>, webhook: string): Problem {
  try {
    requestedWebhook(loadConfig(env), { webhook });
  } catch (error) {
    return error as Problem;
  }
  throw new Error(`${webhook} was accepted`);
}

it('names JOB_WEBHOOK_HTTP_HOSTS for a plain-http webhook, in development and in production', () => {
  for (const env of [{}, production]) {
    const problem = refusal(env, 'http://hooks.example.com/x');
    expect(problem.status).toBe(422);
    expect(problem.message).toBe(
      'The webhook must be an https URL; plain http is sent only to the hosts JOB_WEBHOOK_HTTP_HOSTS names (add hooks.example.com).',
    );
    expect(problem.errors).toEqual([
      { path: 'body.webhook', message: expect.stringContaining('JOB_WEBHOOK_HTTP_HOSTS') },
    ]);
  }
});

it('names FETCH_ALLOW_LOOPBACK too for a receiver on this machine, outside production only', () => {
  expect(refusal({}, 'http://localhost:4000/hook').message).toBe(
    'The webhook must be an https URL; plain http is sent only to the hosts JOB_WEBHOOK_HTTP_HOSTS names ' +
      '(add localhost), and to this machine only with FETCH_ALLOW_LOOPBACK=true.',
  );
  expect(refusal({ JOB_WEBHOOK_HTTP_HOSTS: '127.0.0.1' }, 'http://127.0.0.1:4000/hook').message).toBe(
    'The webhook leads to a private, local or reserved address (this machine: set FETCH_ALLOW_LOOPBACK=true).',
  );
  expect(refusal(production, 'http://localhost:4000/hook').message).not.toContain('FETCH_ALLOW_LOOPBACK');
  expect(refusal(production, 'https://127.0.0.1/hook').message).toBe(
    'The webhook leads to a private, local or reserved address.',
  );
});

it('takes a local http webhook once both settings allow it', () => {
  const env = { JOB_WEBHOOK_HTTP_HOSTS: 'localhost,127.0.0.1', FETCH_ALLOW_LOOPBACK: 'true' };
  expect(requestedWebhook(loadConfig(env), { webhook: 'http://127.0.0.1:4000/hook' })).toEqual({
    url: 'http://127.0.0.1:4000/hook',
    events: ['completed'],
  });
});
