// The job webhooks in /openapi.json's `webhooks` (api/openapi-webhooks.ts; the
// content events' are held to what is sent in test/api/content-webhooks/),
// held to what is really sent: a speech job asks for every event, a receiver
// on 127.0.0.1 hears them, and each delivery's headers and body are checked
// against the documented ones with ajv, and verified with the
// `standardwebhooks` package as the documented signature says.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { giveCredits, jobsSuite, startTestWorker } from '../helpers/jobs.ts';
import { pollUntil } from '../helpers/poll.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const env = { FETCH_ALLOW_LOOPBACK: 'true', JOB_WEBHOOK_HTTP_HOSTS: '127.0.0.1' };
const suite = jobsSuite(env);
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  await giveCredits(suite.t, suite.a.site, 5000, suite.a.editor.user.id);
});
afterAll(() => receiver.close());

type Document = { webhooks?: Record<string, { post: Operation }> };
type Operation = {
  parameters: { in: string; name: string; required?: boolean }[];
  requestBody: { content: Record<string, unknown> };
  responses: Record<string, unknown>;
};

it('documents job.started, job.progress and job.completed as they are sent', async () => {
  const { t, a } = suite;
  const document = (await request(t.app).get('/openapi.json').expect(200)).body as Document;
  expect(
    Object.keys(document.webhooks ?? {})
      .filter((type) => type.startsWith('job.'))
      .sort(),
  ).toEqual(['job.completed', 'job.progress', 'job.started']);

  suite.worker = await startTestWorker(t, env);
  const path = '/hooks/speech';
  const submitted = await request(t.app)
    .post(`/${a.site.slug}/media/tts`)
    .set(a.editor.auth)
    .send({
      // Long enough to run past the second a progress delivery waits for (a job that ends first is told only its end).
      text: 'Told at every step of a long reading. '.repeat(120),
      webhook: `${receiver.url}${path}`,
      webhook_events: ['start', 'progress', 'completed'],
    })
    .expect(202);
  const deliveries = await pollUntil(
    async () => receiver.at(path),
    (heard) =>
      ['"job.started"', '"job.progress"', '"job.completed"'].every((type) =>
        heard.some((delivery) => delivery.body.includes(type)),
      ),
    { tries: 600, everyMs: 50 },
  );

  const secret = (await request(t.app).get(`/api/tenants/${a.tenant.id}/webhook-secret`).set(a.admin.auth).expect(200))
    .body.secret as string;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'doc');
  const types = new Set<string>();
  for (const delivery of deliveries) {
    const body = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; data: { id: string } };
    types.add(body.type);
    expect(body.data.id).toBe(submitted.body.id);
    const operation = document.webhooks![body.type]!.post;
    // Every documented header is sent; the body is the documented one.
    const required = operation.parameters.filter((parameter) => parameter.in === 'header' && parameter.required);
    expect(required.map((header) => header.name).sort()).toEqual([
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
    ]);
    for (const header of required) expect(delivery.headers[header.name]).toEqual(expect.any(String));
    const pointer = `doc#/webhooks/${body.type}/post/requestBody/content/application~1json/schema`;
    if (!ajv.validate({ $ref: pointer }, JSON.parse(delivery.body))) throw new Error(ajv.errorsText(ajv.errors));
    expect(Object.keys(operation.responses).sort()).toEqual(['200', '410']);
  }
  expect([...types].sort()).toEqual(['job.completed', 'job.progress', 'job.started']);
});
