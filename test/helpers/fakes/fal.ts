// fal's queue API and webhooks on 127.0.0.1, written from fal's reference,
// not from our client. Sources, by the short names the rules below cite:
//   DOC-Q       docs.fal.ai/model-endpoints/queue (the queue's endpoints table)
//   DOC-WH      docs.fal.ai/model-apis/model-endpoints/webhooks (payloads, retry policy, verifying)
//   DOC-ERR     fal.ai/docs/errors (model errors: `{detail: [{loc, msg, type}]}`, X-Fal-Retryable)
//   DOC-REQERR  fal.ai/docs/documentation/model-apis/request-errors (`{detail, error_type}`, X-Fal-Error-Type)
//   DOC-CANCEL  fal.ai/docs/inference-api/queue/cancel (the cancel statuses)
//   DOC-CONC    docs.fal.ai/documentation/model-apis/concurrency-limits (requests wait, not refused)
//   DOC-ARGS    docs.fal.ai/documentation/model-apis/model-arguments ("image_size" presets)
//   FJS         fal-ai/fal-js @381105e libs/client/src (request.ts, queue.ts, utils.ts, types/common.ts,
//               types/endpoints.ts: the models' inputs and outputs)
//   PAGE        fal.ai/models/<model id>/llms.txt (ranges the generated types leave out)
// What no source settles is marked GUESS. The queue, its JWKS and the output
// files share one server; the adapter is pointed at it by base URL and JWKS URL.
import type http from 'node:http';
import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { startRecordingServer, type Recorded } from './recording-server.ts';

/** Instead of the next queue call's own answer: this status, body and headers; or no answer (until close); or the own answer, late. */
export type Answer =
  { status: number; body?: unknown; headers?: Record<string, string> } | { hang: true } | { delayMs: number };

/** How the next webhook goes out: as fal sends it, twice, signed wrongly, with an old timestamp, or by a key not in the JWKS. */
export type DeliveryMode = 'normal' | 'duplicate' | 'bad-signature' | 'stale' | 'unknown-key';

export type Sent = { headers: Record<string, string>; body: string; status: number | 'unreachable' };

type QueuedRequest = {
  id: string;
  model: string;
  input: Record<string, unknown>;
  webhookUrl: string | undefined;
  state: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  canceled: boolean;
  /** Once COMPLETED: the model's output, or its error answer. */
  outcome?: { status: number; body: unknown };
  /** Input keys the model's schema lacks: fal ignores them (GUESS: pydantic's default), a test should see none. */
  ignored: string[];
};

export type FakeFal = {
  /** The queue's base URL (what https://queue.fal.run is in production). */
  url: string;
  /** Where the fake publishes its webhook keys (https://rest.alpha.fal.ai/.well-known/jwks.json in production). */
  jwksUrl: string;
  /** The FAL_KEY it accepts (`key_id:key_secret`, FJS config.ts credentialsFromEnv). */
  key: string;
  userId: string;
  requests: Recorded[];
  queued: Map<string, QueuedRequest>;
  /** Answers for the next queue calls (submit, status, result, cancel), in order. */
  answers: Answer[];
  /** Answers for the next JWKS fetches, in order. */
  jwksAnswers: Answer[];
  /** How many times the JWKS was fetched. */
  jwksFetches: number;
  /** Every webhook delivery made, retries and duplicates included, in order (also those of a submit's `completeOnSubmit`). */
  deliveries: (Sent & { requestId: string })[];
  /** Files served at /files/<name>, as fal's CDN would (no key needed). */
  files: Map<string, { bytes: Buffer; contentType: string }>;
  /** Complete every request as soon as it is queued, its webhook sent before the submit is answered. */
  completeOnSubmit: boolean;
  /**
   * The bytes of an output file, by its name (`<request id>.mp4`, `<request id>-0.jpg`), for a test whose
   * platform decodes what it fetches; else the fake's own small file (the video only an MP4's first box).
   */
  media: ((name: string) => Buffer | undefined) | undefined;
  /** The request starts running (IN_PROGRESS). */
  start(requestId: string): void;
  /** The request ends: the input checked against the model's schema, the output made, the webhook sent (and retried). */
  complete(
    requestId: string,
    options?: { mode?: DeliveryMode; fail?: { status: number; body: unknown } },
  ): Promise<Sent[]>;
  /** A new signing key; the old ones stay in the JWKS unless `drop`. */
  rotateKey(options?: { drop?: boolean }): void;
  /** A URL on this server under another origin (localhost rather than 127.0.0.1): not fal's host. */
  foreignUrl(name: string): string;
  close(): Promise<void>;
};

// ---- the models' inputs (FJS types/endpoints.ts, ranges from PAGE) --------

type Field =
  | { kind: 'string' | 'boolean' }
  | { kind: 'integer' | 'number'; min?: number; max?: number }
  | { kind: 'literal'; values: readonly string[] }
  | { kind: 'image_size' };

type Schema = { required: string[]; fields: Record<string, Field> };

// DOC-ARGS: the presets and their pixels.
const imageSizes: Record<string, [number, number]> = {
  square_hd: [1024, 1024],
  square: [512, 512],
  portrait_4_3: [768, 1024],
  portrait_16_9: [576, 1024],
  landscape_4_3: [1024, 768],
  landscape_16_9: [1024, 576],
};

// FJS FluxDevInput (FluxSchnellInput = FluxDevInput); num_images 1–4, guidance 1–20 (PAGE);
// schnell steps ≤ 12 (an observed 422 "Input should be less than or equal to 12"), dev ≤ 50 (PAGE).
const flux = (maxSteps: number): Schema => ({
  required: ['prompt'],
  fields: {
    prompt: { kind: 'string' },
    image_size: { kind: 'image_size' },
    num_images: { kind: 'integer', min: 1, max: 4 },
    num_inference_steps: { kind: 'integer', min: 1, max: maxSteps },
    guidance_scale: { kind: 'number', min: 1, max: 20 },
    seed: { kind: 'integer' },
    output_format: { kind: 'literal', values: ['jpeg', 'png'] },
    enable_safety_checker: { kind: 'boolean' },
    sync_mode: { kind: 'boolean' },
    acceleration: { kind: 'literal', values: ['none', 'regular', 'high'] },
  },
});

const models: Record<string, { schema: Schema; kind: 'image' | 'video' }> = {
  'fal-ai/flux/schnell': { schema: flux(12), kind: 'image' },
  'fal-ai/flux/dev': { schema: flux(50), kind: 'image' },
  // FJS KlingVideoV15ProTextToVideoInput (= KlingVideoV25TurboProTextToVideoInput): durations are strings.
  'fal-ai/kling-video/v2.5-turbo/pro/text-to-video': {
    kind: 'video',
    schema: {
      required: ['prompt'],
      fields: {
        prompt: { kind: 'string' },
        duration: { kind: 'literal', values: ['5', '10'] },
        aspect_ratio: { kind: 'literal', values: ['16:9', '9:16', '1:1'] },
        negative_prompt: { kind: 'string' },
        cfg_scale: { kind: 'number', min: 0, max: 1 },
      },
    },
  },
  // FJS SeedanceProTextToVideoInput (= BytedanceSeedanceV1ProFastTextToVideoInput).
  'fal-ai/bytedance/seedance/v1/pro/fast/text-to-video': {
    kind: 'video',
    schema: {
      required: ['prompt'],
      fields: {
        prompt: { kind: 'string' },
        duration: { kind: 'literal', values: ['2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'] },
        aspect_ratio: { kind: 'literal', values: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] },
        resolution: { kind: 'literal', values: ['480p', '720p', '1080p'] },
        camera_fixed: { kind: 'boolean' },
        seed: { kind: 'integer' },
        num_frames: { kind: 'integer', min: 1 },
        enable_safety_checker: { kind: 'boolean' },
      },
    },
  },
};

/** FJS utils.ts parseEndpointId: the app is owner/alias; the rest is the subpath. */
const appOf = (model: string) => model.split('/').slice(0, 2).join('/');
const apps = new Set(Object.keys(models).map(appOf));

type FieldError = { loc: (string | number)[]; msg: string; type: string; input?: unknown };

// DOC-ERR's shape with pydantic v2's types and messages (the observed 422 above is one).
function validate(schema: Schema, input: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const name of schema.required)
    if (input[name] === undefined) errors.push({ loc: ['body', name], msg: 'Field required', type: 'missing', input });
  for (const [name, value] of Object.entries(input)) {
    const field = schema.fields[name];
    if (!field || value === undefined) continue;
    const error = (type: string, msg: string) => errors.push({ loc: ['body', name], msg, type, input: value });
    if (field.kind === 'string' && typeof value !== 'string') error('string_type', 'Input should be a valid string');
    if (field.kind === 'boolean' && typeof value !== 'boolean') error('bool_type', 'Input should be a valid boolean');
    if (field.kind === 'integer' || field.kind === 'number') {
      if (typeof value !== 'number' || (field.kind === 'integer' && !Number.isInteger(value)))
        error(`${field.kind === 'integer' ? 'int' : 'float'}_type`, `Input should be a valid ${field.kind}`);
      else if (field.min !== undefined && value < field.min)
        error('greater_than_equal', `Input should be greater than or equal to ${field.min}`);
      else if (field.max !== undefined && value > field.max)
        error('less_than_equal', `Input should be less than or equal to ${field.max}`);
    }
    if (field.kind === 'literal' && !field.values.includes(value as string))
      error('literal_error', `Input should be ${field.values.map((v) => `'${v}'`).join(', ')}`);
    if (field.kind === 'image_size') {
      // FJS: a preset name or ImageSize {width, height}; 14142 a side is fal's ImageSize bound on
      // other models' schemas (GUESS for FLUX).
      const object = value as { width?: unknown; height?: unknown };
      const side = (v: unknown) => Number.isInteger(v) && (v as number) > 0 && (v as number) <= 14142;
      const ok = typeof value === 'string' ? value in imageSizes : side(object?.width) && side(object?.height);
      if (!ok) error('literal_error', `Input should be ${Object.keys(imageSizes).join(', ')} or a valid ImageSize`);
    }
  }
  return errors;
}

// ---- outputs: small files of the right kind -----------------------------

const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const jpeg = Buffer.from('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////////////////////////////////////////2Q==', 'base64');
// An MP4's ftyp box; the adapter does not decode what it fetches.
const mp4 = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from('ftypisom\0\0\x02\0isomiso2', 'latin1')]);

const sha256hex = (body: string) => createHash('sha256').update(body).digest('hex');

type SigningKey = { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> };

function newKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const kid = randomUUID();
  // DOC-WH: the JWKS lists OKP/Ed25519 keys, `x` base64url.
  return { kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'EdDSA' } };
}

export async function startFakeFal(options: { retryDelayMs?: number; retries?: number } = {}): Promise<FakeFal> {
  const key = 'fake-key-id:fake-key-secret';
  const userId = 'fake-user-' + randomUUID().slice(0, 8);
  const queued = new Map<string, QueuedRequest>();
  const files = new Map<string, { bytes: Buffer; contentType: string }>();
  let keys = [newKey()];
  let base = '';

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const urlsOf = (request: QueuedRequest) => {
    // DOC-Q: status, result and cancel are on the app's path, without the model's subpath.
    const root = `${base}/${appOf(request.model)}/requests/${request.id}`;
    return { response_url: root, status_url: `${root}/status`, cancel_url: `${root}/cancel` };
  };

  function output(request: QueuedRequest): unknown {
    const kind = models[request.model]!.kind;
    const file = (name: string, own: Buffer, contentType: string) => {
      const bytes = fake.media?.(name) ?? own;
      files.set(name, { bytes, contentType });
      return { url: `${base}/files/${name}`, content_type: contentType, file_name: name, file_size: bytes.length };
    };
    if (kind === 'video') {
      // FJS I2VOutput / ModifyOutput: {video: File} (Seedance adds its seed).
      return { video: file(`${request.id}.mp4`, mp4, 'video/mp4'), seed: 42 };
    }
    // FJS unoOutput: {images, seed, prompt, has_nsfw_concepts, timings}.
    const size = request.input.image_size ?? 'landscape_4_3';
    const [width, height] =
      typeof size === 'string'
        ? imageSizes[size]!
        : [(size as { width: number }).width, (size as { height: number }).height];
    const count = (request.input.num_images as number | undefined) ?? 1;
    const asJpeg = (request.input.output_format ?? 'jpeg') === 'jpeg';
    return {
      images: Array.from({ length: count }, (_, index) => ({
        ...file(
          `${request.id}-${index}.${asJpeg ? 'jpg' : 'png'}`,
          asJpeg ? jpeg : png,
          asJpeg ? 'image/jpeg' : 'image/png',
        ),
        width,
        height,
      })),
      seed: (request.input.seed as number | undefined) ?? 42,
      prompt: request.input.prompt,
      has_nsfw_concepts: Array.from({ length: count }, () => false),
      timings: { inference: 0.1 },
    };
  }

  /** DOC-WH: the delivery's body and its four headers, signed as fal signs. */
  function signed(request: QueuedRequest, mode: DeliveryMode) {
    const outcome = request.outcome!;
    const ok = outcome.status < 400;
    const body = JSON.stringify({
      request_id: request.id,
      gateway_request_id: request.id,
      status: ok ? 'OK' : 'ERROR',
      payload: outcome.body,
      // DOC-WH "Response errors": `"error": "Invalid status code: 422"`.
      ...(ok ? {} : { error: `Invalid status code: ${outcome.status}` }),
    });
    const timestamp = String(Math.floor(Date.now() / 1000) - (mode === 'stale' ? 600 : 0));
    const message = `${request.id}\n${userId}\n${timestamp}\n${sha256hex(mode === 'bad-signature' ? body + ' ' : body)}`;
    const signer = mode === 'unknown-key' ? newKey() : keys.at(-1)!;
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-fal-webhook-request-id': request.id,
        'x-fal-webhook-user-id': userId,
        'x-fal-webhook-timestamp': timestamp,
        'x-fal-webhook-signature': sign(null, Buffer.from(message, 'utf8'), signer.privateKey).toString('hex'),
      },
    };
  }

  /** DOC-WH "Retry policy": 10 retries over 2 hours, compressed to `retryDelayMs` apart. */
  async function deliver(url: string, delivery: { body: string; headers: Record<string, string> }): Promise<Sent[]> {
    const sent: Sent[] = [];
    for (let attempt = 0; attempt <= (options.retries ?? 10); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 50));
      const status = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 'unreachable' as const,
      );
      sent.push({ ...delivery, status });
      fake.deliveries.push({ ...delivery, status, requestId: delivery.headers['x-fal-webhook-request-id']! });
      if (typeof status === 'number' && status < 300) break;
    }
    return sent;
  }

  async function complete(requestId: string, how: Parameters<FakeFal['complete']>[1] = {}): Promise<Sent[]> {
    const request = queued.get(requestId);
    if (!request || request.canceled) throw new Error(`The fake holds no live request ${requestId}.`);
    const errors = validate(models[request.model]!.schema, request.input);
    // DOC-WH "Response errors": an input the model refuses ends the request with its 422, told by the webhook.
    request.outcome =
      how.fail ?? (errors.length ? { status: 422, body: { detail: errors } } : { status: 200, body: output(request) });
    request.state = 'COMPLETED';
    if (!request.webhookUrl) return [];
    const mode = how.mode ?? 'normal';
    const delivery = signed(request, mode);
    const sent = await deliver(request.webhookUrl, delivery);
    // DOC-WH: deliveries may repeat (the retries); a duplicate is the same body, signed anew.
    if (mode === 'duplicate') sent.push(...(await deliver(request.webhookUrl, signed(request, 'normal'))));
    return sent;
  }

  /** FJS request.ts: `Authorization: Key <key_id>:<key_secret>`. */
  function refusedKey(request: Recorded): unknown {
    const given = request.headers.authorization ?? '';
    const credentials = /^Key (.+)$/.exec(given)?.[1];
    if (given && (!credentials || !credentials.includes(':')))
      // Observed message (ComfyUI-Fal-API-Flux#20); its 401 is a GUESS.
      return { detail: "Invalid Key Authorization header format. Expected '<key_id>:<key_secret>'." };
    // Observed for an unknown key (fal-ai/fal#1068); the same for none (GUESS).
    if (credentials !== key) return { detail: 'No user found for Key ID and Secret' };
    return undefined;
  }

  async function queue(req: Recorded, res: http.ServerResponse) {
    const refused = refusedKey(req);
    if (refused) return send(res, 401, refused);
    const segments = req.path.split('/').filter(Boolean);
    const app = segments.slice(0, 2).join('/');
    // Observed: `{"detail":"Application \"schnell\" not found"}` for an app fal lacks (decolua/9router#993).
    if (segments.length < 2 || !apps.has(app))
      return send(res, 404, { detail: `Application "${segments[1] ?? segments[0] ?? ''}" not found` });
    const rest = segments.slice(2);

    if (rest[0] === 'requests' && rest[1]) {
      const request = queued.get(rest[1]);
      const known = request && appOf(request.model) === app;
      const action = rest.slice(2).join('/');
      if (action === 'cancel' && req.method === 'PUT') {
        // DOC-CANCEL: the statuses; the HTTP codes beside them are a GUESS (202 / 400 / 404).
        if (!known) return send(res, 404, { status: 'NOT_FOUND' });
        if (request.state === 'COMPLETED' || request.canceled) return send(res, 400, { status: 'ALREADY_COMPLETED' });
        // GUESS: no webhook follows a cancel.
        request.canceled = true;
        return send(res, 202, { status: 'CANCELLATION_REQUESTED' });
      }
      if (req.method !== 'GET' || (action !== '' && action !== 'status'))
        return send(res, 405, { detail: 'Method Not Allowed' }); // GUESS: FastAPI's answer
      if (!known) return send(res, 404, { detail: 'Request not found' }); // GUESS
      if (action === 'status') {
        // FJS types/common.ts QueueStatus; DOC-Q `?logs=1`.
        const state = request.canceled ? 'COMPLETED' : request.state;
        return send(res, 200, {
          status: state,
          request_id: request.id,
          ...urlsOf(request),
          ...(state === 'IN_QUEUE' ? { queue_position: 0 } : {}),
          ...(req.query.get('logs') === '1' ? { logs: [] } : {}),
          ...(state === 'COMPLETED' ? { metrics: { inference_time: 0.1 } } : {}),
        });
      }
      // GUESS: the result of a request still running, or canceled.
      if (!request.outcome)
        return send(res, 400, { detail: request.canceled ? 'Request was cancelled' : 'Request is still in progress' });
      return send(res, request.outcome.status, request.outcome.body, { 'x-fal-request-id': request.id });
    }

    const model = segments.join('/');
    if (req.method !== 'POST') return send(res, 405, { detail: 'Method Not Allowed' }); // GUESS
    if (!models[model]) return send(res, 404, { detail: 'Not Found' }); // GUESS: a path the app lacks
    const input = req.body;
    // GUESS: a body that is not a JSON object (or not sent as one) is refused at submit, pydantic's way.
    if (
      !/^application\/json\b/.test(req.headers['content-type'] ?? '') ||
      typeof input !== 'object' ||
      input === null ||
      Array.isArray(input)
    )
      return send(res, 422, {
        detail: [
          {
            loc: ['body'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
            type: 'model_attributes_type',
          },
        ],
      });
    const body = input as Record<string, unknown>;
    const request: QueuedRequest = {
      id: randomUUID(),
      model,
      input: body,
      webhookUrl: req.query.get('fal_webhook') ?? undefined,
      state: 'IN_QUEUE',
      canceled: false,
      ignored: Object.keys(body).filter((name) => !(name in models[model]!.schema.fields)),
    };
    queued.set(request.id, request);
    if (fake.completeOnSubmit) await complete(request.id);
    // DOC-Q's submit answer, with FJS InQueueQueueStatus's status and queue_position; DOC-WH's gateway_request_id.
    send(res, 200, {
      status: 'IN_QUEUE',
      request_id: request.id,
      gateway_request_id: request.id,
      ...urlsOf(request),
      queue_position: 0,
    });
  }

  const server = await startRecordingServer(async (request, res) => {
    const answer = async (list: Answer[], own: () => unknown) => {
      const next = list.shift();
      if (next && 'hang' in next) return server.hold(res);
      if (next && 'status' in next) return send(res, next.status, next.body ?? {}, next.headers);
      if (next && 'delayMs' in next) await new Promise((resolve) => setTimeout(resolve, next.delayMs));
      return own();
    };
    if (request.path === '/.well-known/jwks.json' && request.method === 'GET') {
      fake.jwksFetches += 1;
      return answer(fake.jwksAnswers, () => send(res, 200, { keys: keys.map((k) => k.jwk) }));
    }
    if (request.path.startsWith('/files/') && request.method === 'GET') {
      const file = files.get(decodeURIComponent(request.path.slice('/files/'.length)));
      if (!file) return send(res, 404, { detail: 'Not Found' });
      res.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.bytes.length) });
      return res.end(file.bytes);
    }
    return answer(fake.answers, () => queue(request, res));
  });
  base = server.url;
  const port = new URL(base).port;

  const fake: FakeFal = {
    url: base,
    jwksUrl: `${base}/.well-known/jwks.json`,
    key,
    userId,
    requests: server.requests,
    queued,
    answers: [],
    jwksAnswers: [],
    jwksFetches: 0,
    deliveries: [],
    files,
    completeOnSubmit: false,
    media: undefined,
    start(requestId) {
      const request = queued.get(requestId);
      if (request) request.state = 'IN_PROGRESS';
    },
    complete,
    rotateKey({ drop = false } = {}) {
      keys = drop ? [newKey()] : [...keys, newKey()];
    },
    foreignUrl: (name) => `http://localhost:${port}/files/${name}`,
    close: () => server.close(),
  };
  return fake;
}

/** DOC-REQERR: an infrastructure error, `{detail, error_type}` with the type in X-Fal-Error-Type too. */
export function infrastructureError(
  type: 'request_timeout' | 'startup_timeout' | 'runner_scheduling_failure' | 'runner_disconnected',
): Answer {
  const status = type.endsWith('timeout') ? 504 : 503;
  // "Request timed out" is DOC-REQERR's; the other sentences are a GUESS.
  const detail = {
    request_timeout: 'Request timed out',
    startup_timeout: 'Startup timed out',
    runner_scheduling_failure: 'Runner scheduling failed',
    runner_disconnected: 'Runner disconnected',
  }[type];
  return { status, body: { detail, error_type: type }, headers: { 'x-fal-error-type': type } };
}

/** A 429: undocumented for the queue (DOC-CONC: requests wait rather than fail), but FJS retry.ts retries one. Body and Retry-After: GUESS. */
export const rateLimited = (retryAfterSeconds?: number): Answer => ({
  status: 429,
  body: { detail: 'Too many requests' },
  headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
});
