// POST /v1/audio/speech, as OpenAI's reference describes it (openai/openai-openapi
// f85dbe2, components.schemas.CreateSpeechRequest, "SPEC" below): a JSON body
// with no other keys (additionalProperties: false), answered with the audio
// bytes of the format asked.
import {
  invalidType,
  invalidValue,
  missingParameter,
  modelNotFound,
  outOfRange,
  type Refusal,
  refusal,
  tooLong,
  unrecognizedArgument,
} from './errors.ts';
import type { AudioFormat } from './media.ts';

const keys = ['model', 'input', 'instructions', 'voice', 'response_format', 'speed', 'stream_format'];
/** SPEC model (gpt-4o-mini-tts-2025-03-20 was shut down on 2026-07-23: dimagi/open-chat-studio#3210). */
const models = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15'];
/** SPEC voice: "Supported built-in voices are …", or a custom voice `{ "id": "voice_…" }`. */
const voices = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
  'marin',
  'cedar',
];
const formats: AudioFormat[] = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
/** SPEC instructions: "Does not work with tts-1 or tts-1-hd"; stream_format: "sse is not supported for tts-1 or tts-1-hd". */
const plain = ['tts-1', 'tts-1-hd'];

/** The wording of OpenAI's refusal of a parameter a model lacks (observed for max_tokens, find_string 2374717039). */
const unsupportedParameter = (name: string) =>
  refusal(400, `Unsupported parameter: '${name}' is not supported with this model.`, {
    param: name,
    code: 'unsupported_parameter',
  });

/** The first thing OpenAI would refuse in this request; else the audio format to answer. */
export function checkSpeech(body: Record<string, unknown>): Refusal | AudioFormat {
  // additionalProperties: false. OpenAI's words for it here are not verified; chat's are used.
  const unknown = Object.keys(body).find((key) => !keys.includes(key));
  if (unknown) return unrecognizedArgument(unknown);
  for (const required of ['model', 'input', 'voice'])
    if (body[required] === undefined) return missingParameter(required);
  if (typeof body.model !== 'string') return invalidType('model', 'a string', body.model);
  if (!models.includes(body.model)) return modelNotFound(body.model);
  if (typeof body.input !== 'string') return invalidType('input', 'a string', body.input);
  // SPEC input: maxLength 4096 (JSON Schema counts code points).
  const length = [...body.input].length;
  if (length > 4096) return tooLong('input', 4096, length);
  const voice = body.voice;
  const custom = typeof voice === 'object' && voice !== null && typeof (voice as { id?: unknown }).id === 'string';
  if (!custom && !voices.includes(String(voice))) return invalidValue('voice', voice, voices);
  if (body.instructions !== undefined) {
    if (typeof body.instructions !== 'string') return invalidType('instructions', 'a string', body.instructions);
    if (plain.includes(body.model)) return unsupportedParameter('instructions');
    if ([...body.instructions].length > 4096) return tooLong('instructions', 4096, [...body.instructions].length);
  }
  const format = body.response_format ?? 'mp3';
  if (!formats.includes(format as AudioFormat)) return invalidValue('response_format', format, formats);
  if (body.speed !== undefined) {
    if (typeof body.speed !== 'number') return invalidType('speed', 'a number', body.speed);
    // SPEC speed: minimum 0.25, maximum 4.
    if (body.speed < 0.25 || body.speed > 4) return outOfRange('speed', body.speed, { min: 0.25, max: 4 });
  }
  const streamFormat = body.stream_format ?? 'audio';
  if (!['sse', 'audio'].includes(String(streamFormat)))
    return invalidValue('stream_format', streamFormat, ['sse', 'audio']);
  if (streamFormat === 'sse') {
    if (plain.includes(body.model)) return unsupportedParameter('stream_format');
    throw new Error('The OpenAI fake does not stream speech as events (stream_format: sse).');
  }
  return format as AudioFormat;
}
