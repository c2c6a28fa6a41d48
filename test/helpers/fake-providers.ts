// AI providers on 127.0.0.1 for tests: an OpenAI-compatible speech endpoint
// and an asynchronous media provider that accepts jobs and lets the test
// deliver results to the platform's signed webhook. Answers are scripted per
// call; every request is recorded. /embeddings answers deterministic vectors
// (see fakeEmbedding).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { standardSignature, signingKey } from '../../core/providers/replicate/webhooks.ts';
import { toneHeader } from '../../core/media/wav.ts';
import { fakeEmbedding } from './fake-embeddings.ts';

/** A mono 16-bit PCM WAV of a 440 Hz tone: real audio that ffmpeg and ffprobe read. */
export function toneWav(seconds: number, rate = 22_050): Buffer {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), i * 2);
  return Buffer.concat([toneHeader(data.length, rate), data]);
}

/**
 * ok: audio of `seconds` (images: what was asked), after `delayMs`, once `until`
 * settles; status: that
 * error, with `headers` (Retry-After, say); hang: never answers (until close);
 * raw: a 200 of this content type and body (garbage); truncated: the start of
 * an answer longer than that, then the connection closes; stall: the start of
 * an answer, then nothing more (until close).
 */
export type Script =
  | { kind: 'ok'; seconds: number; delayMs?: number; until?: Promise<unknown> }
  | { kind: 'status'; status: number; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'raw'; contentType: string; body: string | Buffer }
  | { kind: 'truncated' }
  | { kind: 'stall' };

export type Recorded = { method: string; path: string; headers: http.IncomingHttpHeaders; body: unknown };

export type FakeProviders = {
  url: string;
  requests: Recorded[];
  /** Answers for the next calls to /audio/speech, in order; after them, `fallback`. */
  speech: Script[];
  fallback: Script;
  /** Answers for the next calls to /images/generations (ok: as many PNGs as asked for, of the size asked for). */
  images: Script[];
  /** Jobs accepted at /v1/jobs: the provider's id, the callback and what was asked. */
  accepted: { id: string; callback_url: string; reference: string; input: unknown }[];
  /** Answers for the next calls to /chat/completions (the message content, and the tokens to report); after them, a media description. */
  chat: { content: string; totalTokens?: number }[];
  /** Audio or video served at /files/{name}, for deliveries by URL. */
  files: Map<string, Buffer>;
  /** The OpenAI-compatible /videos API: the clip served once done, how many polls answer in_progress first, and a failure to answer instead. */
  videos: { clip: Buffer; pollsBeforeDone: number; failWith?: string; created: Record<string, unknown>[] };
  /**
   * Answers /chat/completions with what it returns for the request (a
   * translation, say); when unset, or when it returns undefined, the chat
   * endpoint answers the media description as before.
   */
  chatReply: ((request: ChatRequest) => string | undefined) | undefined;
  /** Failures the next calls to /embeddings answer with instead of vectors, in order: a status, or a scripted fault. */
  embeddingFailures: (number | Exclude<Script, { kind: 'ok' }>)[];
  /** Words /embeddings treats as the same word (a stand-in for what a real model knows of meaning). */
  synonyms: Map<string, string>;
  /** Resolves when the next request reaches the fake (for "kill the worker mid-call"). */
  nextRequest(): Promise<Recorded>;
  close(): Promise<void>;
};

export type ChatRequest = { model: string; messages: { role: string; content: unknown }[] };

export async function startFakeProviders(): Promise<FakeProviders> {
  const hanging = new Set<http.ServerResponse>();
  let waiters: ((recorded: Recorded) => void)[] = [];
  const state: Omit<FakeProviders, 'url' | 'close' | 'nextRequest'> = {
    requests: [],
    speech: [],
    images: [],
    chat: [],
    fallback: { kind: 'ok', seconds: 2 },
    accepted: [],
    files: new Map(),
    videos: { clip: Buffer.alloc(0), pollsBeforeDone: 2, created: [] },
    chatReply: undefined,
    embeddingFailures: [],
    synonyms: new Map(),
  };
  const polls = new Map<string, number>();
  /** Answers a scripted failure of an endpoint whose answers are `contentType`. */
  const fault = (res: http.ServerResponse, script: Exclude<Script, { kind: 'ok' }>, contentType: string) => {
    switch (script.kind) {
      case 'hang':
        hanging.add(res);
        return;
      case 'status':
        res.writeHead(script.status, { 'Content-Type': 'application/json', ...script.headers });
        res.end(JSON.stringify({ error: { message: `scripted ${script.status}` } }));
        return;
      case 'raw':
        res.writeHead(200, { 'Content-Type': script.contentType });
        res.end(script.body);
        return;
      case 'truncated':
      case 'stall':
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': '100000' });
        hanging.add(res);
        // Closed only once the start has left: the client has the headers and part of the body.
        res.write(
          contentType === 'application/json' ? '{"created": 1, "data": [{"b64_json": "iVBORw0KGgo' : toneWav(0.1),
          () => script.kind === 'truncated' && res.destroy(),
        );
        return;
    }
  };
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // not JSON: kept as text
    }
    const recorded = { method: req.method ?? '', path: url.pathname, headers: req.headers, body };
    state.requests.push(recorded);
    const notify = waiters;
    waiters = [];
    for (const waiter of notify) waiter(recorded);
    if (req.method === 'POST' && url.pathname === '/audio/speech') {
      const script = state.speech.shift() ?? state.fallback;
      if (script.kind !== 'ok') return fault(res, script, 'audio/wav');
      if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
      await script.until;
      res.writeHead(200, { 'Content-Type': 'audio/wav' });
      res.end(toneWav(script.seconds));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/images/generations') {
      const script = state.images.shift() ?? { kind: 'ok', seconds: 0 };
      if (script.kind !== 'ok') return fault(res, script, 'application/json');
      if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
      const asked = body as { n?: number; size?: string };
      const [width, height] = (asked.size ?? '256x256').split('x').map(Number) as [number, number];
      const images = await Promise.all(
        Array.from({ length: asked.n ?? 1 }, (_, i) =>
          sharp({ create: { width, height, channels: 3, background: { r: 40 * i, g: 100, b: 200 } } })
            .png()
            .toBuffer(),
        ),
      );
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ created: Date.now(), data: images.map((image) => ({ b64_json: image.toString('base64') })) }),
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/images/edits') {
      const edited = await sharp({
        create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 200, b: 0, alpha: 1 } },
      })
        .png()
        .toBuffer();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ created: Date.now(), data: [{ b64_json: edited.toString('base64') }] }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/chat/completions') {
      // A reply hook (by request) first, then the queue of scripted answers, then a media description.
      const replied = state.chatReply?.(body as ChatRequest);
      const scripted = replied === undefined ? state.chat.shift() : { content: replied };
      const content =
        scripted?.content ??
        JSON.stringify({ alt: 'A red square on white', caption: 'Red square.', tags: ['Red', 'Square'] });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content } }],
          ...(scripted?.totalTokens ? { usage: { total_tokens: scripted.totalTokens } } : {}),
        }),
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/embeddings') {
      const failure = state.embeddingFailures.shift();
      if (typeof failure === 'object') return fault(res, failure, 'application/json');
      if (failure) {
        res.writeHead(failure, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted ${failure}` } }));
        return;
      }
      const input = (body as { input: string | string[] }).input;
      const texts = typeof input === 'string' ? [input] : input;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: texts.map((text, index) => ({
            object: 'embedding',
            index,
            embedding: fakeEmbedding(text, state.synonyms),
          })),
          usage: { prompt_tokens: fakeTokens(texts), total_tokens: fakeTokens(texts) },
        }),
      );
      return;
    }
    if (req.method === 'POST' && url.pathname === '/v1/jobs') {
      const request = body as { callback_url: string; reference: string; input: unknown };
      const id = `prov-${randomUUID()}`;
      state.accepted.push({
        id,
        callback_url: request.callback_url,
        reference: request.reference,
        input: request.input,
      });
      res.writeHead(202, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/videos') {
      const id = `video_${randomUUID()}`;
      state.videos.created.push(body as Record<string, unknown>);
      polls.set(id, 0);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'video', status: 'queued', progress: 0 }));
      return;
    }
    const video = /^\/videos\/([^/]+)(\/content)?$/.exec(url.pathname);
    if (req.method === 'GET' && video && polls.has(video[1]!)) {
      const id = video[1]!;
      if (video[2]) {
        res.writeHead(200, { 'Content-Type': 'video/mp4' });
        res.end(state.videos.clip);
        return;
      }
      const seen = polls.get(id)! + 1;
      polls.set(id, seen);
      const done = seen > state.videos.pollsBeforeDone;
      const answer = !done
        ? { id, status: 'in_progress', progress: Math.round((100 * seen) / (state.videos.pollsBeforeDone + 1)) }
        : state.videos.failWith
          ? { id, status: 'failed', error: { message: state.videos.failWith } }
          : { id, status: 'completed', progress: 100 };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(answer));
      return;
    }
    const file = url.pathname.startsWith('/files/') ? state.files.get(url.pathname.slice('/files/'.length)) : undefined;
    if (req.method === 'GET' && file) {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(file);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    nextRequest: () => new Promise<Recorded>((resolve) => waiters.push(resolve)),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Headers that sign `body` as the media provider would (Standard Webhooks scheme). */
export function signedDelivery(secret: string, body: unknown, options: { id?: string; timestamp?: number } = {}) {
  const id = options.id ?? `evt-${randomUUID()}`;
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const raw = JSON.stringify(body);
  return {
    raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${standardSignature(signingKey(secret), id, timestamp, raw)}`,
    },
  };
}

/** What the fake says it used: four characters a token. */
const fakeTokens = (texts: string[]) => texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
