// A strict fake of OpenAI's API on 127.0.0.1, written from OpenAI's reference
// (openai/openai-openapi f85dbe2, "SPEC") and the error bodies users observed
// (test/helpers/fakes/openai/errors.ts), not from our client: it refuses what
// OpenAI refuses — a missing or wrong key, a body that is not JSON (or, for
// edits, not multipart), keys an endpoint does not take, sizes a model cannot
// make — with OpenAI's status and body, and answers real files (pictures,
// audio) otherwise. The rules of each endpoint are in ./openai/<endpoint>.ts.
//
// Tests script each endpoint's next answers (an error with its headers, a
// hang, a slow answer, garbage) and read every request it got.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { type ChatReply, chatAnswer, chatStream, checkChat } from './openai/chat.ts';
import { checkEmbeddings, embeddingsAnswer } from './openai/embeddings.ts';
import { missingKey, notBearer, notJson, type Refusal, refusal, wrongKey } from './openai/errors.ts';
import { checkEdit, checkGeneration, imagesAnswer, type Upload } from './openai/images.ts';
import { audio } from './openai/media.ts';
import { checkSpeech } from './openai/speech.ts';

export { quotaExceeded, rateLimited, serverError } from './openai/errors.ts';
export type { ChatReply } from './openai/chat.ts';

export const endpoints = [
  'images/generations',
  'images/edits',
  'audio/speech',
  'chat/completions',
  'embeddings',
] as const;
export type Endpoint = (typeof endpoints)[number];

/**
 * ok: the endpoint's answer, after `delayMs` and once `until` settles (chat: `reply` scripts it, or makes it
 * from the request; a streamed chat answer's events come `chunkDelayMs` apart);
 * refuse: that status, body and headers (rateLimited(), quotaExceeded(), or any body: a compatible server's);
 * hang: no answer at all; stall: a 200's headers (and a streamed answer's first event), then nothing;
 * truncated: the first half of the endpoint's answer, then the connection closes; raw: this body as a 200
 * (garbage).
 * The request is checked first whatever comes next: a refused request is answered its refusal.
 * `until`, `truncated`, `chunkDelayMs` and `reply` as a function are test affordances (a provider that answers
 * when the test says, a connection that breaks, a model that writes slowly), not rules of OpenAI's.
 */
export type Script =
  | {
      kind: 'ok';
      delayMs?: number;
      until?: Promise<unknown>;
      chunkDelayMs?: number;
      reply?: ChatReply | ((request: Record<string, unknown>) => ChatReply);
    }
  | { kind: 'refuse'; refusal: { status: number; body: unknown; headers?: Record<string, string> | undefined } }
  | { kind: 'hang' }
  | { kind: 'stall' }
  | { kind: 'truncated' }
  | { kind: 'raw'; contentType: string; body: string | Buffer };

export type Recorded = {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body, or a multipart body's text fields. */
  body: unknown;
  /** A multipart body's files. */
  files: Upload[];
};

export type FakeOpenAI = {
  /** The base URL, as OPENAI_BASE_URL takes it (…/v1). */
  url: string;
  apiKey: string;
  requests: Recorded[];
  /** Answers for the endpoint's next requests, in order; after them, ok. */
  script(endpoint: Endpoint, ...scripts: Script[]): void;
  /** Resolves with the next request (to `endpoint`, when named) as it arrives: for "kill the worker mid-call". */
  nextRequest(endpoint?: Endpoint): Promise<Recorded>;
  /** Words the embeddings treat as one (a stand-in for what a real model knows of meaning; a test affordance). */
  synonyms: Map<string, string>;
  /** Forgets the requests and the scripted answers not used (a test's leftovers). */
  reset(): void;
  close(): Promise<void>;
};

/** Headers OpenAI sends on every answer (observed: community.openai.com/t/…/1268905; openai-node reads x-request-id). */
const commonHeaders = () => ({
  'x-request-id': `req_${randomBytes(16).toString('hex')}`,
  'openai-version': '2020-10-01',
  'openai-processing-ms': '12',
  'x-ratelimit-limit-requests': '500',
  'x-ratelimit-remaining-requests': '499',
  'x-ratelimit-reset-requests': '120ms',
  'x-ratelimit-limit-tokens': '200000',
  'x-ratelimit-remaining-tokens': '199000',
  'x-ratelimit-reset-tokens': '300ms',
});

/**
 * The configuration that names the fake as the text chain's language model
 * (its default, gpt-5.4-mini), at `creditsPer1k` credits per 1,000 tokens
 * (2 by default, as the text kind is priced), or `read/written` apart.
 */
export const textModelEnv = (
  fake: Pick<FakeOpenAI, 'url' | 'apiKey'>,
  creditsPer1k: number | `${number}/${number}` = 2,
) => ({
  TEXT_PROVIDERS: 'openai',
  OPENAI_BASE_URL: fake.url,
  OPENAI_API_KEY: fake.apiKey,
  OPENAI_TEXT_PRICES: `gpt-5.4-mini=${creditsPer1k}`,
});

export async function startFakeOpenAI(options: { apiKey?: string } = {}): Promise<FakeOpenAI> {
  const apiKey = options.apiKey ?? `sk-fake-${randomBytes(12).toString('hex')}`;
  const requests: Recorded[] = [];
  const scripts = new Map<Endpoint, Script[]>(endpoints.map((endpoint) => [endpoint, []]));
  const synonyms = new Map<string, string>();
  let waiters: { endpoint: Endpoint | undefined; resolve: (recorded: Recorded) => void }[] = [];

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { ...commonHeaders(), 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const refuse = (res: http.ServerResponse, answer: Extract<Script, { kind: 'refuse' }>['refusal']) =>
    send(res, answer.status, answer.body, answer.headers);

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      // A misuse of the fake (a scripted call of a tool not offered, streaming): the test should fail loudly.
      if (!res.headersSent)
        send(res, 500, {
          error: { message: `The OpenAI fake: ${error.message}`, type: 'fake_error', param: null, code: null },
        });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const endpoint = endpoints.find((name) => url.pathname === `/v1/${name}`);
    const multipart = /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
    const { body, files } = multipart && endpoint === 'images/edits' ? await readForm(req) : await readJson(req);
    const recorded = { method: req.method ?? '', path: url.pathname, headers: req.headers, body, files };
    requests.push(recorded);
    const heard = waiters.filter((waiter) => waiter.endpoint === undefined || waiter.endpoint === endpoint);
    waiters = waiters.filter((waiter) => !heard.includes(waiter));
    for (const waiter of heard) waiter.resolve(recorded);

    // SPEC securitySchemes.ApiKeyAuth (bearer); the 401 bodies are observed (./openai/errors.ts).
    const authorization = req.headers.authorization;
    if (!authorization) return refuse(res, missingKey());
    if (!/^Bearer /i.test(authorization)) return refuse(res, notBearer());
    if (authorization.slice('Bearer '.length) !== apiKey) return refuse(res, wrongKey(authorization.slice(7)));

    // Observed: "Invalid URL (POST /v1/responses)", 404 (find_string 71064035635, 59954334835).
    if (!endpoint || req.method !== 'POST')
      return refuse(res, refusal(404, `Invalid URL (${req.method} ${url.pathname})`));
    // SPEC requestBody.content: application/json, and multipart/form-data for edits (the JSON form of edits,
    // EditImageBodyJsonParam, is not emulated). A body of another type is read as JSON and fails so; not verified.
    if (!multipart && !/^application\/json/i.test(req.headers['content-type'] ?? '')) return refuse(res, notJson());
    if (multipart && endpoint !== 'images/edits') return refuse(res, notJson());
    if (body === undefined) return refuse(res, notJson());

    const outcome = await examine(endpoint, body as Record<string, unknown>, files, synonyms);
    if (typeof outcome !== 'function') return refuse(res, outcome);

    const script = scripts.get(endpoint)!.shift() ?? { kind: 'ok' };
    switch (script.kind) {
      case 'refuse':
        return refuse(res, script.refusal);
      case 'hang':
        return;
      case 'stall': {
        if (!outcome.stream) {
          res.writeHead(200, { ...commonHeaders(), 'content-type': 'application/json' });
          res.write('{"created": ');
          return;
        }
        const { contentType, events } = await outcome.stream();
        res.writeHead(200, { ...commonHeaders(), 'content-type': contentType });
        res.write(events[0]!);
        return;
      }
      case 'truncated': {
        // The answer's own headers and length, then half of it, then the connection is gone.
        const { contentType, body: answer } = await outcome();
        const whole = Buffer.from(answer);
        res.writeHead(200, { ...commonHeaders(), 'content-type': contentType, 'content-length': String(whole.length) });
        res.write(whole.subarray(0, Math.floor(whole.length / 2)), () => res.destroy());
        return;
      }
      case 'raw':
        res.writeHead(200, { ...commonHeaders(), 'content-type': script.contentType });
        res.end(script.body);
        return;
      case 'ok': {
        if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
        await script.until?.catch(() => undefined);
        const reply = typeof script.reply === 'function' ? script.reply(body as Record<string, unknown>) : script.reply;
        if (outcome.stream) {
          const { contentType, events } = await outcome.stream(reply);
          res.writeHead(200, { ...commonHeaders(), 'content-type': contentType });
          for (const event of events) {
            if (script.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, script.chunkDelayMs));
            if (res.destroyed) return;
            res.write(event);
          }
          res.end();
          return;
        }
        const { contentType, body: answer } = await outcome(reply);
        res.writeHead(200, { ...commonHeaders(), 'content-type': contentType });
        res.end(answer);
        return;
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    script(endpoint, ...more) {
      scripts.get(endpoint)!.push(...more);
    },
    nextRequest: (endpoint) => new Promise<Recorded>((resolve) => waiters.push({ endpoint, resolve })),
    synonyms,
    reset() {
      requests.length = 0;
      for (const queue of scripts.values()) queue.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging and stalled answers keep their sockets open: closed here.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the endpoint answers a request it accepts (chat: as scripted), whole. */
type WholeAnswer = (reply?: ChatReply) => Promise<{ contentType: string; body: string | Buffer }>;
/** A streamed chat answer: whole (for `truncated`), and as its events. */
type Answer = WholeAnswer & {
  stream?: (reply?: ChatReply) => Promise<{ contentType: string; events: string[] }>;
};

const json = (body: unknown) => ({ contentType: 'application/json', body: JSON.stringify(body) });

/** The endpoint's refusal of this request, or its answer. */
async function examine(
  endpoint: Endpoint,
  body: Record<string, unknown>,
  files: Upload[],
  synonyms: Map<string, string>,
): Promise<Refusal | Answer> {
  switch (endpoint) {
    case 'images/generations':
    case 'images/edits': {
      const plan = endpoint === 'images/edits' ? await checkEdit(body, files) : checkGeneration(body);
      return 'status' in plan ? plan : async () => json(await imagesAnswer(plan));
    }
    case 'audio/speech': {
      const format = checkSpeech(body);
      // SPEC /audio/speech 200: application/octet-stream.
      return typeof format === 'object'
        ? format
        : async () => ({ contentType: 'application/octet-stream', body: await audio(format) });
    }
    case 'chat/completions': {
      const refused = checkChat(body);
      if (refused) return refused;
      if (body.stream !== true) return async (reply) => json(chatAnswer(body, reply ?? {}));
      // SPEC /chat/completions 200: text/event-stream, the events of CreateChatCompletionStreamResponse.
      const stream = async (reply?: ChatReply) => ({
        contentType: 'text/event-stream',
        events: chatStream(body, reply ?? {}),
      });
      return Object.assign(
        async (reply?: ChatReply) => ({
          contentType: 'text/event-stream',
          body: chatStream(body, reply ?? {}).join(''),
        }),
        { stream },
      );
    }
    case 'embeddings': {
      const plan = checkEmbeddings(body);
      return 'status' in plan ? plan : async () => json(embeddingsAnswer(plan, synonyms));
    }
  }
}

async function readJson(req: http.IncomingMessage): Promise<{ body: unknown; files: Upload[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    const body: unknown = JSON.parse(text);
    // OpenAI's bodies are objects; anything else is not one it can read.
    return { body: typeof body === 'object' && body !== null && !Array.isArray(body) ? body : undefined, files: [] };
  } catch {
    return { body: undefined, files: [] };
  }
}

function readForm(req: http.IncomingMessage): Promise<{ body: unknown; files: Upload[] }> {
  return new Promise((resolve) => {
    const fields: Record<string, string> = {};
    const files: Upload[] = [];
    const parser = busboy({ headers: req.headers, limits: { fileSize: 64 * 1024 * 1024 } });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () =>
        files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(chunks) }),
      );
    });
    parser.on('close', () => resolve({ body: fields, files }));
    // A body that is not the multipart it says it is: nothing OpenAI can read.
    parser.on('error', () => resolve({ body: undefined, files: [] }));
    req.pipe(parser);
  });
}
