// Replicate on 127.0.0.1, written from Replicate's own reference — its
// OpenAPI document ("Replicate HTTP API" 1.0.0-a1, as vendored by
// tryAGI/Replicate src/libs/Replicate/openapi.yaml; cited ROAS), its webhook
// pages (replicate.com/docs/topics/webhooks/verify-webhook: DOC-VERIFY;
// …/receive-webhook: DOC-RECV), its rate-limit page (DOC-RATE) and recorded
// answers (replicate-python tests/cassettes) — not from our client. It refuses
// what Replicate refuses, answers Replicate's error bodies, holds a request
// under `Prefer: wait`, runs predictions as the test plans them, serves their
// files, and posts webhooks signed as Replicate signs them, with the test's
// mischief (duplicates, late events, wrong signatures, stale timestamps, a
// webhook before the create call has returned). Every request is recorded.
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  fluxSchnell,
  officialModels,
  validateInput,
  type InvalidField,
  type ModelSchema,
} from './replicate-schemas.ts';

/** How a created prediction runs: it ends as planned after `afterMs` (early: ends, and its webhook is answered, before the create call is), or waits for `complete`. */
export type Plan =
  | { status: 'succeeded' | 'failed'; afterMs?: number; early?: boolean; output?: unknown; error?: string }
  | { status: 'pending' };

/** Answers to the next API requests, before any check: throttled, an error, or none at all. */
export type Answer =
  | { status: 429; retryAfterSeconds: number; header: boolean; body: 'replicate' | 'rate-limit-doc' }
  | { status: number; title: string; detail: string }
  | { hang: true };

/** What the test makes of the terminal webhooks that follow. */
export type Mischief = {
  /** The same message twice (same webhook-id): DOC-RECV "Identical webhooks can be sent more than once". */
  duplicate?: boolean;
  /** A `start` or `output` event after `completed`: no order is documented, so a receiver must expect it. */
  late?: 'start' | 'output';
  signature?: 'wrong';
  timestampOffsetSeconds?: number;
};

export type Delivered = { prediction: string; event: string; webhookId: string; answered: number | 'unreachable' };

export type Recorded = { method: string; path: string; headers: http.IncomingHttpHeaders; body: unknown };

type Stored = {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  output: unknown;
  data_removed: boolean;
  error: string | null;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  webhook: string | undefined;
  events: string[];
  schema: ModelSchema;
  /** The terminal message's webhook-id: the same on every retry (DOC-VERIFY). */
  messageId: string;
  ended: Promise<void>;
  end: () => void;
};

/** A community model's version, run at /v1/predictions as `owner/name:<id>` or `<id>`. */
export const communityVersion = { model: 'acme/flux-tuned', id: 'a'.repeat(60) + '1234' };

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the base64 part of a `whsec_` secret (DOC-VERIFY). */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.split('_').pop() ?? '', 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

const terminal = new Set(['succeeded', 'failed', 'canceled', 'aborted']);
// ROAS parameters_prefer_header: its pattern (which would let 61–99 through) and "a number of seconds between 1 and 60".
const preferPattern = /^wait(=([1-9]|[1-9][0-9]|60))?$/;
const preferable = (prefer: string) => preferPattern.test(prefer) && Number(prefer.split('=')[1] ?? 60) <= 60;
// ROAS schemas_prediction_request.webhook_events_filter items enum.
const eventNames = ['start', 'output', 'logs', 'completed'];
const contentTypes: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  mp4: 'video/mp4',
  mp3: 'audio/mpeg',
};

export async function startFakeReplicate() {
  const token = `r8_${randomBytes(12).toString('hex')}`;
  // ROAS paths./webhooks/default/secret: `{"key": "whsec_…"}`; Standard Webhooks keys are 24–64 random bytes.
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const predictions = new Map<string, Stored>();
  const files = new Map<string, Buffer>();
  const versions = new Map<string, { model: string; schema: ModelSchema }>([
    [communityVersion.id, { model: communityVersion.model, schema: fluxSchnell }],
  ]);
  const hanging: http.ServerResponse[] = [];
  const closing = new AbortController();
  const timers = new Set<NodeJS.Timeout>();
  // A timer the fake's close clears, so that nothing it planned outlives it.
  const after = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => after(ms, resolve));
  const fake = {
    url: '',
    token,
    secret,
    requests: [] as Recorded[],
    /** How the next created predictions run, in order; after them, each waits for `complete`. */
    plans: [] as Plan[],
    answers: [] as Answer[],
    mischief: {} as Mischief,
    deliveries: [] as Delivered[],
    /** Backoff of a terminal webhook's retries (DOC-RECV: exponential, the last ~1 minute after completion; shortened here). */
    retryDelaysMs: [100, 200, 400],
    /** The longest a `Prefer: wait` request is held (Replicate: the n seconds asked, up to 60; shortened by tests). */
    maxHoldMs: 60_000,
    /**
     * The bytes of a prediction's output file, by its name (out-0.png, output.mp4, output.mp3), for a test
     * whose platform decodes what it fetches; else a line of text naming it. Replicate serves the model's
     * own files (ROAS predictions.get: "Any files will be represented as HTTPS URLs").
     */
    media: undefined as ((name: string) => Buffer | undefined) | undefined,
    predictions,
    versions,
    /** Ends a prediction still running as planned, and posts its webhook; resolves once that delivery is done. */
    complete: (id: string, plan: Exclude<Plan, { status: 'pending' }>) => end(found(id), plan.status, plan),
    /** Posts the prediction's terminal webhook again (a retry, as Replicate would). */
    redeliver: (id: string) => deliverTerminal(found(id)),
    /** What Replicate does an hour after: output and files gone (ROAS predictions.get: "automatically removed after an hour"). */
    expire(id: string) {
      const prediction = found(id);
      prediction.output = null;
      prediction.data_removed = true;
      for (const path of files.keys()) if (path.startsWith(`/delivery/${id}/`)) files.delete(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        for (const timer of timers) clearTimeout(timer);
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  function found(id: string): Stored {
    const prediction = predictions.get(id);
    if (!prediction) throw new Error(`The fake has no prediction ${id}`);
    return prediction;
  }

  /** ROAS schemas_prediction_response, every required field, `urls` pointing back here. */
  function view(p: Stored, status = p.status) {
    return {
      id: p.id,
      model: p.model,
      version: p.version,
      input: p.input,
      logs: '',
      output: status === p.status ? p.output : null,
      data_removed: p.data_removed,
      error: p.error,
      status,
      created_at: p.created_at,
      started_at: p.started_at,
      completed_at: status === p.status ? p.completed_at : null,
      source: 'api',
      metrics: {},
      urls: {
        web: `https://replicate.com/p/${p.id}`,
        get: `${fake.url}/v1/predictions/${p.id}`,
        cancel: `${fake.url}/v1/predictions/${p.id}/cancel`,
      },
    };
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    const problem = status >= 400 && !headers['content-type'];
    res
      .writeHead(status, { 'content-type': problem ? 'application/problem+json' : 'application/json', ...headers })
      .end(JSON.stringify(body));
  }

  // The 422 body Replicate answers (observed): detail lists "- field: description" lines, root fields without the prefix.
  function invalid(res: http.ServerResponse, fields: InvalidField[]) {
    const detail = fields.map((f) => (f.field ? `- ${f.field}: ${f.description}\n` : `- ${f.description}\n`)).join('');
    send(res, 422, { detail, status: 422, title: 'Input validation failed', invalid_fields: fields });
  }

  async function post(p: Stored, event: string, id: string, body: string) {
    const timestamp = Math.floor(Date.now() / 1000) + (fake.mischief.timestampOffsetSeconds ?? 0);
    const signature =
      fake.mischief.signature === 'wrong'
        ? signWebhook(`whsec_${randomBytes(32).toString('base64')}`, id, timestamp, body)
        : signWebhook(secret, id, timestamp, body);
    let answered: number | 'unreachable';
    try {
      const response = await fetch(p.webhook!, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        },
        body,
        // ROAS `webhook`: "Replicate will not follow redirects".
        redirect: 'manual',
        signal: closing.signal,
      });
      await response.arrayBuffer();
      answered = response.status;
    } catch {
      answered = 'unreachable';
    }
    fake.deliveries.push({ prediction: p.id, event, webhookId: id, answered });
    return answered;
  }

  /** The terminal webhook, retried on a 4xx/5xx or no answer (DOC-RECV "Retries": only the terminal one is). */
  async function deliverTerminal(p: Stored) {
    if (!p.webhook || !p.events.includes('completed')) return;
    const body = JSON.stringify(view(p));
    for (const delay of [0, ...fake.retryDelaysMs]) {
      if (closing.signal.aborted) return;
      if (delay) await sleep(delay);
      const answered = await post(p, 'completed', p.messageId, body);
      if (typeof answered === 'number' && answered >= 200 && answered < 300) break;
    }
    if (fake.mischief.duplicate) await post(p, 'completed', p.messageId, body);
    if (fake.mischief.late) await intermediate(p, fake.mischief.late);
  }

  /** A `start` or `output` event: the prediction as it stood then, its own message id, never retried (DOC-RECV). */
  async function intermediate(p: Stored, event: 'start' | 'output') {
    if (!p.webhook) return;
    const body = JSON.stringify(view(p, event === 'start' ? 'starting' : 'processing'));
    await post(p, event, `msg_${randomBytes(12).toString('hex')}`, body);
  }

  async function end(
    p: Stored,
    status: 'succeeded' | 'failed' | 'canceled',
    plan: { output?: unknown; error?: string } = {},
  ) {
    if (terminal.has(p.status)) return;
    p.status = status;
    p.completed_at = new Date().toISOString();
    if (status === 'succeeded') {
      const file = (name: string) => {
        const path = `/delivery/${p.id}/${name}`;
        files.set(path, fake.media?.(name) ?? Buffer.from(`${p.model} ${p.id} ${name}`));
        return `${fake.url}${path}`;
      };
      p.output = plan.output ?? p.schema.output(p.input, file);
    }
    if (status === 'failed') p.error = plan.error ?? 'Prediction failed for an unknown reason.';
    p.end();
    if (status === 'succeeded' && p.events.includes('output')) await intermediate(p, 'output');
    await deliverTerminal(p);
  }

  function create(res: http.ServerResponse, req: http.IncomingMessage, raw: string, official: string | undefined) {
    // RJS index.js request() always sends JSON; Replicate's answer to another content type is not documented (a 4xx here).
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? ''))
      return send(res, 415, {
        title: 'Unsupported Media Type',
        detail: 'Send the body as application/json.',
        status: 415,
      });
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { title: 'Bad Request', detail: 'The body is not valid JSON.', status: 400 });
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return invalid(res, [
        { type: 'invalid_type', field: '', description: 'Invalid type. Expected: object, given: ' + typeof body },
      ]);
    const fields = body as Record<string, unknown>;
    // ROAS schemas_prediction_request / schemas_version_prediction_request: additionalProperties false, required input (and version).
    const allowed = official
      ? ['input', 'stream', 'webhook', 'webhook_events_filter']
      : ['version', 'input', 'stream', 'webhook', 'webhook_events_filter'];
    const errors: InvalidField[] = [];
    for (const name of official ? ['input'] : ['version', 'input'])
      if (fields[name] === undefined) errors.push({ type: 'required', field: '', description: `${name} is required` });
    for (const name of Object.keys(fields))
      if (!allowed.includes(name))
        errors.push({
          type: 'additional_property_not_allowed',
          field: '',
          description: `Additional property ${name} is not allowed`,
        });
    const input = fields.input;
    if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
      errors.push({
        type: 'invalid_type',
        field: 'input',
        description: 'Invalid type. Expected: object, given: ' + typeof input,
      });
    const filter = fields.webhook_events_filter;
    if (filter !== undefined && !Array.isArray(filter))
      errors.push({
        type: 'invalid_type',
        field: 'webhook_events_filter',
        description: 'Invalid type. Expected: array',
      });
    if (Array.isArray(filter))
      filter.forEach((event, i) => {
        if (!eventNames.includes(event as string))
          errors.push({
            type: 'enum',
            field: `webhook_events_filter.${i}`,
            description: `webhook_events_filter.${i} must be one of the following: ${eventNames.map((e) => `"${e}"`).join(', ')}`,
          });
      });
    // ROAS `webhook`: "An HTTPS URL". Plain http is let through to 127.0.0.1 only, where the tests listen (not verified how Replicate words this refusal).
    const webhook = fields.webhook;
    if (
      webhook !== undefined &&
      !(typeof webhook === 'string' && /^(https:\/\/|http:\/\/127\.0\.0\.1[:/])/.test(webhook) && URL.canParse(webhook))
    )
      errors.push({ type: 'format', field: 'webhook', description: "Does not match format 'uri' (an HTTPS URL)" });
    if (errors.length > 0) return invalid(res, errors);
    // ROAS parameters_prefer_header (a bad one: not verified how Replicate answers it).
    const prefer = req.headers.prefer as string | undefined;
    if (prefer !== undefined && !preferable(prefer))
      return send(res, 400, {
        title: 'Bad Request',
        detail: 'Prefer must be wait or wait=n, n from 1 to 60.',
        status: 400,
      });

    let model: { name: string; version: string; schema: ModelSchema } | undefined;
    if (official) {
      const schema = officialModels.get(official);
      // SKILLS HTTP_API.md "Error responses": 404 {"title":"Not Found","detail":"Model not found: foo/bar","status":404}.
      if (!schema) return send(res, 404, { title: 'Not Found', detail: `Model not found: ${official}`, status: 404 });
      model = { name: official, version: 'hidden', schema };
    } else {
      // ROAS schemas_version_prediction_request.version: owner/name (official), owner/name:<id>, or <id>.
      const version = String(fields.version);
      const schema = officialModels.get(version);
      const id = /^(?:[^/:]+\/[^/:]+:)?([0-9a-f]{64})$/.exec(version)?.[1];
      const community = id ? versions.get(id) : undefined;
      if (schema) model = { name: version, version: 'hidden', schema };
      else if (community && id) model = { name: community.model, version: id, schema: community.schema };
      // Observed: 422 "Invalid version or not permitted".
      else
        return send(res, 422, {
          title: 'Invalid version or not permitted',
          detail: "The specified version does not exist (or perhaps you don't have permission to use it?)",
          status: 422,
        });
    }
    const refused = validateInput(model.schema, input as Record<string, unknown>);
    if (refused.length > 0) return invalid(res, refused);

    let end = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    const id = randomBytes(16).toString('hex').slice(0, 26);
    const prediction: Stored = {
      id,
      model: model.name,
      version: model.version,
      input: input as Record<string, unknown>,
      output: null,
      data_removed: false,
      error: null,
      status: 'starting',
      created_at: new Date().toISOString(),
      started_at: null,
      completed_at: null,
      webhook: webhook as string | undefined,
      // ROAS: by default "whenever there are new outputs or the prediction has finished".
      events: (filter as string[] | undefined) ?? ['output', 'completed'],
      schema: model.schema,
      messageId: `msg_${randomBytes(12).toString('hex')}`,
      ended,
      end,
    };
    predictions.set(id, prediction);
    if (prediction.events.includes('start')) void intermediate(prediction, 'start');
    return { prediction, prefer };
  }

  async function answerCreate(res: http.ServerResponse, created: { prediction: Stored; prefer: string | undefined }) {
    const { prediction, prefer } = created;
    const plan = fake.plans.shift() ?? { status: 'pending' };
    const atCreation = view(prediction);
    if (plan.status !== 'pending') {
      if (plan.early) await end(prediction, plan.status, plan);
      else after(plan.afterMs ?? 0, () => void end(prediction, plan.status, plan));
    }
    if (prefer === undefined) return send(res, 201, atCreation, { location: atCreation.urls.get });
    // ROAS paths./predictions.post: held up to n seconds; 201 with the final output, 202 while outputs are still to come.
    const seconds = Number(prefer.split('=')[1] ?? 60);
    await Promise.race([prediction.ended, sleep(Math.min(seconds * 1000, fake.maxHoldMs))]);
    send(res, terminal.has(prediction.status) ? 201 : 202, view(prediction), { location: atCreation.urls.get });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const method = req.method ?? 'GET';
    let parsed: unknown = raw;
    try {
      parsed = raw ? JSON.parse(raw) : undefined;
    } catch {
      // kept as text
    }
    fake.requests.push({ method, path, headers: req.headers, body: parsed });

    const answer = fake.answers.shift();
    if (answer && 'hang' in answer) return void hanging.push(res);
    if (answer?.status === 429 && 'retryAfterSeconds' in answer) {
      const n = answer.retryAfterSeconds;
      // DOC-RATE: {"detail":"Request was throttled. Your rate limit resets in ~30s."}; observed answers add status, retry_after and Retry-After.
      const detail = `Request was throttled. Your rate limit resets in ~${n}s.`;
      return send(
        res,
        429,
        answer.body === 'replicate' ? { detail, status: 429, retry_after: n } : { detail },
        answer.header ? { 'retry-after': String(n) } : {},
      );
    }
    if (answer && 'title' in answer)
      return send(res, answer.status, { title: answer.title, detail: answer.detail, status: answer.status });

    // ROAS securitySchemes.bearerAuth; the answer is replicate-python tests/cassettes/run__invalid-token.yaml.
    if (req.headers.authorization !== `Bearer ${token}`)
      return send(res, 401, {
        title: 'Unauthenticated',
        detail: 'You did not pass a valid authentication token',
        status: 401,
      });

    if (method === 'GET' && path.startsWith('/delivery/')) {
      // ROAS predictions.get: output files "need the Authorization header"; gone after an hour.
      const file = files.get(path);
      if (!file) return send(res, 404, { title: 'Not Found', detail: 'Not found.', status: 404 });
      return void res
        .writeHead(200, {
          'content-type': contentTypes[path.split('.').pop() ?? ''] ?? 'application/octet-stream',
          'content-length': file.length,
        })
        .end(file);
    }
    const officialRoute = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
    if (method === 'POST' && (officialRoute || path === '/v1/predictions')) {
      const created = create(res, req, raw, officialRoute ? `${officialRoute[1]}/${officialRoute[2]}` : undefined);
      if (created) await answerCreate(res, created);
      return;
    }
    const one = /^\/v1\/predictions\/([^/]+)(\/cancel)?$/.exec(path);
    if (one && ((method === 'GET' && !one[2]) || (method === 'POST' && one[2]))) {
      const prediction = predictions.get(one[1]!);
      if (!prediction) return send(res, 404, { title: 'Not Found', detail: 'Not found.', status: 404 });
      // ROAS predictions.cancel: 200 with the prediction; the `completed` webhook follows (DOC-RECV: sent on canceled too).
      if (one[2]) void end(prediction, 'canceled');
      return send(res, 200, view(prediction));
    }
    if (method === 'GET' && path === '/v1/webhooks/default/secret') return send(res, 200, { key: secret });
    send(res, 404, { title: 'Not Found', detail: 'Not found.', status: 404 });
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { title: 'Internal Server Error', detail: String(error), status: 500 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export type FakeReplicate = Awaited<ReturnType<typeof startFakeReplicate>>;
