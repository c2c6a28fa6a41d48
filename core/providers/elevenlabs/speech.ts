// Speech from ElevenLabs: POST {ELEVENLABS_BASE_URL}/v1/text-to-speech/{voice_id}
// with the key in `xi-api-key`, answered with the audio itself (ElevenLabs'
// OpenAPI, elevenlabs/elevenlabs-docs fern/apis/api/openapi.json, paths
// "/v1/text-to-speech/{voice_id}"). A small fetch client rather than
// @elevenlabs/elevenlabs-js: it is one request, and callProvider already
// refuses redirects (the SDK's fetch follows them, sending xi-api-key to
// wherever they point), caps the answer's size and tells a timeout from a
// cancel, which the SDK's errors would have to be translated back into.
import { JobError, permanent } from '../../jobs/errors.ts';
import type { SpeechSynthesis, SpeechSynthesizer, VendorSettings } from '../capabilities.ts';
import { callProvider, readBody, retryAfter } from '../http.ts';
import { characterCount, elevenLabsModels } from './models.ts';

const name = 'ElevenLabs';

// A WAV, which ffmpeg reads as it is, at 24 kHz, which no plan gates (only
// 44.1 kHz PCM and WAV need Pro, 192 kbps MP3 Creator). The wav_* formats are
// in the SDK's list since January 2026 (elevenlabs-js
// src/api/resources/textToSpeech/types/TextToSpeechConvertRequestOutputFormat.ts,
// commit af7848c), newer than the OpenAPI snapshot.
const outputFormat = 'wav_24000';

// Our neutral voices as ElevenLabs' default ("premade") voices, which every
// account has (elevenlabs-docs fern/docs/pages/product-guides/voices/default-voices.mdx,
// "Current Default Voices"): George is the voice of ElevenLabs' own quickstart
// (examples/snippets/node/quickstart_tts.mts). Any other name is taken as a voice id.
const voices: Record<string, string> = {
  default: 'JBFqnCBsd6RMkjVDRZzb', // George
  female: 'EXAVITQu4vr4xnSDxMaL', // Sarah
  male: 'nPczCjzI2devNBz1zQrb', // Brian
};

// voice_settings.speed goes from 0.7 to 1.2 (elevenlabs-docs
// fern/docs/pages/best-practices/prompting/controls.mdx, "Pace"); beyond, the
// API clamps it without a word (livekit/agents#4774), so a tempo outside is
// not sent at all and ffmpeg makes all of it (speedApplied: false) — sending
// 1.2 and saying so would have ffmpeg apply the whole tempo on top. Eleven v3
// takes its pace from audio tags in the text instead (prompting/eleven-v3.mdx).
const speeds = { min: 0.7, max: 1.2 };
const paceByTags = new Set(['eleven_v3']);

// language_code: Flash and Turbo v2.5 take it (the OpenAPI's text, and
// ElevenLabs' support in livekit/agents#6197), and refuse a language they do
// not speak with a 400 (pipecat-ai/pipecat#5398); other models find the
// language in the text. The 32 languages: models.mdx, "Models overview".
// Eleven v3 takes it too (pipecat#5398), but which codes it reads is not
// written anywhere we found: not sent.
const languagesV25 = new Set(
  'en ja zh de hi fr ko pt it es id nl tr fil pl sv bg ro ar cs el fi hr ms sk da ta uk ru hu no vi'.split(' '),
);
const languageCodes: Record<string, Set<string>> = { eleven_flash_v2_5: languagesV25, eleven_turbo_v2_5: languagesV25 };

/** The ISO 639 code of a BCP 47 tag, when the model takes it (Norwegian Bokmål and Nynorsk are `no` there). */
function languageCode(model: string, language: string): string | undefined {
  const primary = language.split('-')[0]!.toLowerCase();
  const code = primary === 'nb' || primary === 'nn' ? 'no' : primary;
  return languageCodes[model]?.has(code) ? code : undefined;
}

export function elevenLabsSpeech(settings: VendorSettings): SpeechSynthesizer {
  return {
    async synthesize(request, call) {
      if (!settings.apiKey) throw permanent('not_configured', 'ElevenLabs speech needs ELEVENLABS_API_KEY.');
      const characters = characterCount(request.text);
      const limit = elevenLabsModels.find((spec) => spec.model === call.model)?.maxCharacters;
      // Refused here rather than by a call that would fail the same way.
      if (limit !== undefined && characters > limit)
        throw permanent(
          'provider_rejected',
          `ElevenLabs' ${call.model} takes at most ${limit} characters at a time; this text has ${characters}.`,
        );
      const voiceId = voices[request.voice] ?? request.voice;
      const speed = vendorSpeed(call.model, request.speed);
      const language = languageCode(call.model, request.language);
      const response = await callProvider(name, {
        url: `${settings.baseUrl.replace(/\/+$/, '')}/v1/text-to-speech/${encodeURIComponent(voiceId)}?output_format=${outputFormat}`,
        headers: { 'xi-api-key': settings.apiKey },
        json: {
          text: request.text,
          model_id: call.model,
          ...(language ? { language_code: language } : {}),
          ...(speed === undefined ? {} : { voice_settings: { speed } }),
        },
        timeoutMs: settings.timeoutMs,
        signal: call.signal,
        refusal: (answer) => refusal(answer, { voiceId, model: call.model }),
      });
      const audio = await readBody(name, response);
      // Anything but a WAV is garbage here, however it is labelled (ffmpeg need not try it).
      if (audio.subarray(0, 4).toString('latin1') !== 'RIFF' || audio.subarray(8, 12).toString('latin1') !== 'WAVE')
        throw permanent(
          'provider_invalid_response',
          'ElevenLabs answered something other than the WAV audio asked for.',
        );
      // Billed by the text's characters, the unit of the prices (./models.ts), not by the character-cost
      // header: that one is what ElevenLabs charged the account in its credits, which on Flash and
      // Turbo are half the characters (its help centre), and more for some shared voices.
      return { audio, speedApplied: speed !== undefined || request.speed === 1, characters };
    },
  };
}

/** The tempo to send ElevenLabs, or undefined when it is the default or ffmpeg must make it. */
function vendorSpeed(model: string, speed: SpeechSynthesis['speed']): number | undefined {
  if (speed === 1 || paceByTags.has(model) || speed < speeds.min || speed > speeds.max) return undefined;
  return speed;
}

/** ElevenLabs' error code: `{"detail": {"status": …, "message": …}}`; a 422's detail is a list, and has none. */
function errorCode(body: string): string | undefined {
  try {
    const detail = (JSON.parse(body) as { detail?: { status?: unknown } } | null)?.detail;
    return typeof detail?.status === 'string' ? detail.status : undefined;
  } catch {
    return undefined; // not JSON: told by the status alone
  }
}

/**
 * ElevenLabs' error answers in plain sentences, its own words kept as the cause for the log.
 * Codes: elevenlabs-docs fern/docs/pages/developer-guides/error-messages.mdx, and the bodies seen
 * in the wild (notes/vendors/elevenlabs.md): quota_exceeded and invalid_api_key come with 401,
 * voice_not_found with 404 (400 voice_does_not_exist before 2025), a bad id with 400 invalid_uid.
 */
function refusal(
  answer: { status: number; body: string; headers: Headers },
  asked: { voiceId: string; model: string },
): JobError {
  const { status, body, headers } = answer;
  const code = errorCode(body);
  const cause = new Error(`ElevenLabs answered ${status}: ${body.slice(0, 1000)}`);
  if (status === 429 || status >= 500) {
    const retryAfterMs = retryAfter(headers.get('retry-after'));
    const wait = retryAfterMs === undefined ? '' : ` (asked to wait ${Math.ceil(retryAfterMs / 1000)} s)`;
    const what =
      code === 'too_many_concurrent_requests'
        ? 'has as many requests running for this account as its plan allows'
        : code === 'system_busy'
          ? 'is too busy to take the request'
          : `failed (${status})`;
    return new JobError('provider_unavailable', `ElevenLabs ${what}${wait}.`, {
      transient: true,
      retryAfterMs,
      status,
      cause,
    });
  }
  const refused = (message: string) => new JobError('provider_rejected', message, { transient: false, status, cause });
  switch (code) {
    case 'quota_exceeded':
      return refused('The ElevenLabs account has not enough credits left for this text.');
    case 'invalid_api_key':
    case 'needs_authorization':
      return refused('ElevenLabs refused the API key (ELEVENLABS_API_KEY).');
    case 'missing_permissions':
      return refused('The ElevenLabs API key lacks the permission to make speech.');
    case 'voice_not_found':
    case 'voice_does_not_exist':
      return refused(`ElevenLabs has no voice "${asked.voiceId}" for this account.`);
    case 'invalid_uid':
      return refused(`ElevenLabs does not know the voice "${asked.voiceId}" or the model ${asked.model}.`);
    case 'max_character_limit_exceeded':
      return refused(`The text is longer than ElevenLabs' ${asked.model} takes at a time.`);
    case 'output_format_not_allowed':
      return refused('The ElevenLabs plan does not include the audio format asked for.');
    case 'only_for_creator+':
      return refused('This ElevenLabs voice needs a Creator plan or above.');
  }
  if (status === 422) return refused('ElevenLabs found the request invalid.');
  return refused(`ElevenLabs refused the request (${status}).`);
}
