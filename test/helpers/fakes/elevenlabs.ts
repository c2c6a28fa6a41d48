// ElevenLabs' text-to-speech API on 127.0.0.1, written from ElevenLabs' own
// reference, not from our adapter: it refuses what ElevenLabs refuses, with
// the bodies ElevenLabs answers, and a few things more on purpose (marked
// STRICTER): what ElevenLabs would take and quietly ignore or clamp, so that a
// test sees our adapter never relies on it.
//
// Sources, and the short names the rules below cite:
// - OAS: ElevenLabs' OpenAPI, elevenlabs/elevenlabs-docs @3557f0b (2025-08-25)
//   fern/apis/api/openapi.json, paths "/v1/text-to-speech/{voice_id}" and
//   components.schemas (Body_Text_to_speech_…, VoiceSettingsResponseModel,
//   HTTPValidationError).
// - SDK: elevenlabs/elevenlabs-js @8710089 (2026-07-01), newer than OAS:
//   src/api/resources/textToSpeech/types/TextToSpeechConvertRequestOutputFormat.ts.
// - MODELS: elevenlabs-docs fern/docs/pages/models.mdx; ERRORS:
//   fern/docs/pages/developer-guides/error-messages.mdx; VOICES:
//   fern/docs/pages/product-guides/voices/default-voices.mdx.
// - Bodies seen from the real API, quoted in GitHub threads (named per rule).
// - FastAPI: the API is served by uvicorn (headers in elevenlabs-docs#1317)
//   and answers 422 in FastAPI's HTTPValidationError shape (OAS); where a
//   rule says FastAPI, the wording is FastAPI/pydantic v2's, not verified
//   against ElevenLabs.
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { toneWav } from '../tone.ts';
import { startRecordingServer, type Recorded, type RecordingServer } from './recording-server.ts';

export type { Recorded };

/** Answers the test scripts for the next valid requests, in order, instead of (or before) the audio. */
export type Script =
  | { kind: 'status'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'hang' };

export type FakeElevenLabs = RecordingServer & {
  /** The one key it takes. */
  apiKey: string;
  next: Script[];
  /** Voice ids the account has: the default voices, and any the test adds. */
  voices: Set<string>;
  /** The plan, for the formats it gates. */
  tier: 'free' | 'starter' | 'creator' | 'pro';
  /** Credits: the plan's quota, and those spent. */
  quota: { limit: number; used: number };
  /** Requests it makes at once; one more is a 429. */
  concurrency: number;
};

// 429 bodies: codes from ERRORS ("Code 429"); the concurrency message as seen
// in rogeriochaves/bmo#5 and lfnovo/open-notebook#103. Whether ElevenLabs
// sends Retry-After is not documented: `retryAfter` is a test affordance.
export const tooManyConcurrentRequests = (retryAfter?: string): Script => ({
  kind: 'status',
  status: 429,
  body: detail(
    'too_many_concurrent_requests',
    'Too many concurrent requests. Your current subscription is associated with a maximum of 2 concurrent requests (running in parallel).',
  ),
  ...(retryAfter ? { headers: { 'Retry-After': retryAfter } } : {}),
});
export const systemBusy = (retryAfter?: string): Script => ({
  kind: 'status',
  status: 429,
  body: detail('system_busy', 'Our services are experiencing high levels of traffic.'),
  ...(retryAfter ? { headers: { 'Retry-After': retryAfter } } : {}),
});
// As seen in elevenlabs/elevenlabs-python#351.
export const somethingWentWrong = (): Script => ({
  kind: 'status',
  status: 500,
  body: detail('something_went_wrong', 'We are sorry, something went wrong. You are not charged for this request.'),
});

// ElevenLabs' error shape: {"detail": {"status": code, "message": words}} (ERRORS codes; every body seen).
function detail(status: string, message: string) {
  return { detail: { status, message } };
}

// FastAPI's 422: {"detail": [{"loc", "msg", "type"}]} (OAS HTTPValidationError, ValidationError).
function invalid(loc: (string | number)[], msg: string, type: string) {
  return { detail: [{ loc, msg, type }] };
}

// OAS output_format enum, with the SDK's newer mp3_24000_48, pcm_32000 and wav_*.
const outputFormats = new Set([
  ...['mp3_22050_32', 'mp3_24000_48', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128', 'mp3_44100_192'],
  ...['pcm_8000', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_32000', 'pcm_44100', 'pcm_48000'],
  ...['wav_8000', 'wav_16000', 'wav_22050', 'wav_24000', 'wav_32000', 'wav_44100', 'wav_48000'],
  ...['ulaw_8000', 'alaw_8000', 'opus_48000_32', 'opus_48000_64', 'opus_48000_96', 'opus_48000_128', 'opus_48000_192'],
]);

// Text-to-speech models and their characters per request (MODELS, "Character
// limits"; eleven_v3 5,000 per elevenlabs.io/docs/llms-full.txt, "Meet the
// models"), and the credits a character costs (ElevenLabs' help centre,
// quoted in Significant-Gravitas/AutoGPT#12909: 0.5 on Flash and Turbo, 1 on
// the others).
const models: Record<string, { limit: number; credits: number }> = {
  eleven_v3: { limit: 5_000, credits: 1 },
  eleven_multilingual_v2: { limit: 10_000, credits: 1 },
  eleven_flash_v2_5: { limit: 40_000, credits: 0.5 },
  eleven_turbo_v2_5: { limit: 40_000, credits: 0.5 },
  eleven_flash_v2: { limit: 30_000, credits: 0.5 },
  eleven_turbo_v2: { limit: 30_000, credits: 0.5 },
  eleven_multilingual_v1: { limit: 10_000, credits: 1 },
  eleven_monolingual_v1: { limit: 10_000, credits: 1 },
};

// The languages language_code may name per model (MODELS, "Models overview":
// the v2.5 models speak these 32). Eleven v3 takes language_code too
// (pipecat-ai/pipecat#5398) over 70+ languages; its codes are not listed in a
// form we could check, so any is taken there.
const v25 = 'en ja zh de hi fr ko pt it es id nl tr fil pl sv bg ro ar cs el fi hr ms sk da ta uk ru hu no vi';
const languages: Record<string, Set<string> | 'any'> = {
  eleven_flash_v2_5: new Set(v25.split(' ')),
  eleven_turbo_v2_5: new Set(v25.split(' ')),
  eleven_v3: 'any',
};

// VOICES, "Current Default Voices": every account has them.
const defaultVoices = [
  ...['Xb7hH8MSUJpSbSDYk0k2', '9BWtsMINqrJLrRacOk9x', 'pqHfZKP75CvOlQylNhV4', 'nPczCjzI2devNBz1zQrb'],
  ...['N2lVS1w4EtoT3dr4eOWO', 'IKne3meq5aSn9XLyUdCD', 'XB0fDUnXU5powFXDhCwa', 'iP95p4xoKVk53GoZ742B'],
  ...['onwK4e9ZLuTAKqWW03F9', 'cjVigY5qzO86Huf0OWal', 'JBFqnCBsd6RMkjVDRZzb', 'cgSgspJ2msm6clMCkdW9'],
  ...['FGY2WhTYpPnrIDTdsKH5', 'TX3LPaxmHKxFdv7VOQHJ', 'pFZP5JQG7iQjIQuC4Bku', 'XrExE9yKIg1WjnnlVkGX'],
  ...['SAz9YHcvj6GT2YYXdXww', 'CwhRBWXzGAHq8TQ4Fs17', 'EXAVITQu4vr4xnSDxMaL', 'bIHbv24MWmeRgasZH58o'],
];

// Body fields of OAS Body_Text_to_speech_v1_text_to_speech__voice_id__post.
const bodyFields = new Set([
  ...['text', 'model_id', 'language_code', 'voice_settings', 'pronunciation_dictionary_locators', 'seed'],
  ...['previous_text', 'next_text', 'previous_request_ids', 'next_request_ids', 'use_pvc_as_ivc'],
  ...['apply_text_normalization', 'apply_language_text_normalization'],
]);
const voiceSettingsFields = new Set(['stability', 'similarity_boost', 'style', 'use_speaker_boost', 'speed']);

// Formats a plan gates (the output_format description in OAS and SDK: 192 kbps
// MP3 needs Creator, 44.1 kHz PCM and WAV need Pro); the 403 body as seen in
// elevenlabs/elevenlabs-js#153.
const tiers = ['free', 'starter', 'creator', 'pro'] as const;
function gate(format: string): { tier: FakeElevenLabs['tier']; words: string } | undefined {
  if (format === 'mp3_44100_192') return { tier: 'creator', words: 'MP3 at 44100hz, 192kbps' };
  if (format === 'pcm_44100') return { tier: 'pro', words: 'PCM at 44100hz' };
  if (format === 'wav_44100') return { tier: 'pro', words: 'WAV at 44100hz' };
  return undefined;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

/** What ElevenLabs answers a request to POST /v1/text-to-speech/{voice_id} before making audio: a refusal, or nothing. */
function check(
  fake: FakeElevenLabs,
  voiceId: string,
  { query, headers, raw }: Recorded,
): Answer | { format: string; text: string; cost: number } {
  // FastAPI validates the query and the body before the handler runs: 422 first.
  const format = query.get('output_format') ?? 'mp3_44100_128'; // OAS: default mp3_44100_128
  if (!outputFormats.has(format))
    return {
      status: 422,
      body: invalid(['query', 'output_format'], `Input should be ${[...outputFormats].join(', ')}`, 'enum'),
    };
  // A body that is not JSON is not read as an object (FastAPI); the content type is not in OAS, FastAPI needs JSON.
  let body: unknown;
  try {
    body = /^application\/json\b/i.test(headers['content-type'] ?? '') ? JSON.parse(raw) : raw;
  } catch {
    return { status: 422, body: invalid(['body', 0], 'JSON decode error', 'json_invalid') };
  }
  const malformed = validateBody(body);
  if (malformed) return { status: 422, body: malformed };
  const asked = body as { text: string; model_id?: string; language_code?: string | null };

  // xi-api-key: DOC-AUTH (fern/api-reference/pages/authentication.mdx); OAS declares it as an optional
  // header, so it is the handler's check. Bodies as seen: griptape-ai/ComfyUI-Griptape#144 (none),
  // SillyTavern/SillyTavern#4483 (wrong).
  const key = headers['xi-api-key'];
  if (key === undefined)
    return {
      status: 401,
      body: detail('needs_authorization', 'Neither authorization header nor xi-api-key received, please provide one.'),
    };
  if (key !== fake.apiKey) return { status: 401, body: detail('invalid_api_key', 'Invalid API key') };

  // model_id: OAS default eleven_multilingual_v2; an unknown id is a 400 invalid_uid, as seen in
  // elevenlabs/elevenlabs-python#163 (a model id) and Significant-Gravitas/AutoGPT#1758 (the body).
  const modelId = asked.model_id ?? 'eleven_multilingual_v2';
  const model = models[modelId];
  if (!model)
    return {
      status: 400,
      body: detail('invalid_uid', `An invalid ID has been received: '${modelId}'. Make sure to provide a correct one.`),
    };
  // An unknown voice: 404 voice_not_found, as seen in elevenlabs-docs#1317 (2025).
  if (!fake.voices.has(voiceId))
    return { status: 404, body: detail('voice_not_found', `A voice with the voice_id ${voiceId} was not found.`) };
  // language_code: the v2.5 models refuse a language they do not speak with this 400 (pipecat-ai/pipecat#5398);
  // other models ignore it (ElevenLabs' support in livekit/agents#6197; the SDK's field description).
  const spoken = languages[modelId];
  if (asked.language_code && spoken && spoken !== 'any' && !spoken.has(asked.language_code))
    return {
      status: 400,
      body: { detail: { message: `Model '${modelId}' does not support language_code '${asked.language_code}'.` } },
    };
  // MODELS "Character limits"; the code from ERRORS, whose table puts it under 400/401 (400 taken); the words are ours.
  const characters = [...asked.text].length;
  if (characters > model.limit)
    return {
      status: 400,
      body: detail(
        'max_character_limit_exceeded',
        `You are sending ${characters} characters; ${modelId} takes at most ${model.limit} in one request.`,
      ),
    };
  const gated = gate(format);
  if (gated && tiers.indexOf(fake.tier) < tiers.indexOf(gated.tier)) {
    const plan = gated.tier === 'pro' ? 'Pro' : 'Creator';
    return {
      status: 403,
      body: detail(
        'output_format_not_allowed',
        `Requested output format ${format} (${gated.words}) is only allowed for ${plan} tier and above.`,
      ),
    };
  }
  // STRICTER: speed on Eleven v3, whose pace is set by audio tags (prompting/eleven-v3.mdx), is refused.
  const speed = (body as { voice_settings?: { speed?: number } | null }).voice_settings?.speed;
  if (modelId === 'eleven_v3' && speed !== undefined && speed !== null && speed !== 1)
    return {
      status: 422,
      body: invalid(['body', 'voice_settings', 'speed'], 'Eleven v3 takes its pace from audio tags', 'value_error'),
    };
  // Quota: text characters × the model's credits, rounded up; the 401 as seen in home-assistant/core#160414.
  const cost = Math.ceil(characters * model.credits);
  const remaining = fake.quota.limit - fake.quota.used;
  if (cost > remaining)
    return {
      status: 401,
      body: detail(
        'quota_exceeded',
        `This request exceeds your quota of ${fake.quota.limit}. You have ${remaining} credits remaining, while ${cost} credits are required for this request.`,
      ),
    };
  return { format, text: asked.text, cost };
}

/** The body as FastAPI would validate it against OAS's schema; STRICTER where marked. */
function validateBody(body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid(
      ['body'],
      'Input should be a valid dictionary or object to extract fields from',
      'model_attributes_type',
    );
  const fields = body as Record<string, unknown>;
  // STRICTER: OAS has no additionalProperties: false, so ElevenLabs ignores an unknown field; refused here.
  for (const field of Object.keys(fields))
    if (!bodyFields.has(field)) return invalid(['body', field], 'Extra inputs are not permitted', 'extra_forbidden');
  // OAS: text is the one required field, a string.
  if (!('text' in fields)) return invalid(['body', 'text'], 'Field required', 'missing');
  for (const field of ['text', 'model_id', 'language_code', 'previous_text', 'next_text'])
    if (field in fields && typeof fields[field] !== 'string' && !(field !== 'text' && fields[field] === null))
      return invalid(['body', field], 'Input should be a valid string', 'string_type');
  // OAS: apply_text_normalization is one of auto, on, off.
  if (
    'apply_text_normalization' in fields &&
    !['auto', 'on', 'off'].includes(fields.apply_text_normalization as string)
  )
    return invalid(['body', 'apply_text_normalization'], "Input should be 'auto', 'on' or 'off'", 'enum');
  // seed: an integer from 0 to 4294967295 (its OAS description).
  const seed = fields.seed;
  if (
    seed !== undefined &&
    seed !== null &&
    !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 4294967295)
  )
    return invalid(['body', 'seed'], 'Must be integer between 0 and 4294967295', 'value_error');
  const settings = fields.voice_settings;
  if (settings === undefined || settings === null) return undefined;
  if (typeof settings !== 'object' || Array.isArray(settings))
    return invalid(['body', 'voice_settings'], 'Input should be a valid dictionary or object', 'model_attributes_type');
  for (const [field, value] of Object.entries(settings)) {
    if (!voiceSettingsFields.has(field))
      return invalid(['body', 'voice_settings', field], 'Extra inputs are not permitted', 'extra_forbidden');
    if (value === null) continue;
    if (field === 'use_speaker_boost') {
      if (typeof value !== 'boolean')
        return invalid(['body', 'voice_settings', field], 'Input should be a valid boolean', 'bool_type');
      continue;
    }
    if (typeof value !== 'number')
      return invalid(['body', 'voice_settings', field], 'Input should be a valid number', 'float_type');
    // STRICTER: speed goes from 0.7 to 1.2 (prompting/controls.mdx, "Pace"); ElevenLabs clamps what is outside
    // without a word (livekit/agents#4774), which would leave our tempo unmade: refused here. The other settings
    // go from 0 to 1 (ElevenLabs' sliders, as listed in livekit/agents#4774), not stated in the reference.
    const [min, max] = field === 'speed' ? [0.7, 1.2] : [0, 1];
    if (value < min)
      return invalid(
        ['body', 'voice_settings', field],
        `Input should be greater than or equal to ${min}`,
        'greater_than_equal',
      );
    if (value > max)
      return invalid(
        ['body', 'voice_settings', field],
        `Input should be less than or equal to ${max}`,
        'less_than_equal',
      );
  }
  return undefined;
}

/** Real audio in the format asked: a tone, a twentieth of a second a character (at least a tenth). */
function audioOf(format: string, text: string): { contentType: string; bytes: Buffer } | undefined {
  const [codec, rate] = format.split('_') as [string, string];
  const wav = toneWav(Math.max(0.1, [...text].length / 20), Number(rate));
  // The content types of WAV and PCM answers are not documented (OAS lists audio/mpeg only).
  if (codec === 'wav') return { contentType: 'audio/wav', bytes: wav };
  // PCM: 16-bit little-endian samples, no header (fern/docs/pages/capabilities/text-to-speech.mdx, "PCM (S16LE)").
  if (codec === 'pcm') return { contentType: 'application/octet-stream', bytes: wav.subarray(44) };
  return undefined; // the fake cannot encode MP3, Opus, μ-law or A-law
}

export async function startFakeElevenLabs(): Promise<FakeElevenLabs> {
  let inFlight = 0;
  const send = (res: http.ServerResponse, answer: Answer) => {
    res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
    res.end(JSON.stringify(answer.body));
  };
  const server = await startRecordingServer(async (request, res) => {
    // OAS: the one operation served is POST /v1/text-to-speech/{voice_id}; anything else is FastAPI's 404 or 405.
    const match = /^\/v1\/text-to-speech\/([^/]+)$/.exec(request.path);
    if (!match) return send(res, { status: 404, body: { detail: 'Not Found' } });
    if (request.method !== 'POST') return send(res, { status: 405, body: { detail: 'Method Not Allowed' } });
    const checked = check(fake, decodeURIComponent(match[1]!), request);
    if ('status' in checked) return send(res, checked);

    // Over the plan's concurrency: 429 too_many_concurrent_requests (ERRORS, "Code 429").
    if (inFlight >= fake.concurrency) return send(res, tooManyConcurrentRequests() as Answer);
    const script = fake.next.shift();
    if (script?.kind === 'status') return send(res, script);
    inFlight++;
    if (script?.kind === 'hang') {
      server.hold(res);
      res.on('close', () => inFlight--);
      return;
    }
    try {
      if (script?.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    } finally {
      inFlight--;
    }
    const audio = audioOf(checked.format, checked.text);
    if (!audio) return send(res, { status: 501, body: { fake: `this fake cannot encode ${checked.format}` } });
    fake.quota.used += checked.cost;
    // Headers: request-id and character-cost (elevenlabs-docs
    // fern/docs/pages/developer-guides/cookbooks/text-to-speech/request-stitching.mdx), the concurrency
    // ones (MODELS, "Concurrency and priority"). character-cost is "the cost of the generation in
    // characters" (the cookbook), and characters are credits under their old name (ElevenLabs' help
    // centre): here the text's characters times the model's credits, as the quota counts them.
    res.writeHead(200, {
      'Content-Type': audio.contentType,
      'request-id': randomBytes(15).toString('base64url').slice(0, 20),
      'character-cost': String(checked.cost),
      'current-concurrent-requests': String(inFlight + 1),
      'maximum-concurrent-requests': String(fake.concurrency),
    });
    res.end(audio.bytes);
  });
  const fake: FakeElevenLabs = Object.assign(server, {
    apiKey: 'sk_fake_elevenlabs_key',
    next: [],
    voices: new Set(defaultVoices),
    tier: 'free' as const,
    quota: { limit: 1_000_000, used: 0 },
    // MODELS "Concurrency and priority": a Free plan makes 2 at once on Multilingual v2, 4 on Flash and Turbo.
    concurrency: 4,
  });
  return fake;
}
