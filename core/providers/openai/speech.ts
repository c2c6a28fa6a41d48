// Speech from OpenAI's POST /audio/speech (openai/openai-openapi,
// components.schemas.CreateSpeechRequest, which allows no other keys): WAV,
// which ffmpeg reads without guessing; the speed within OpenAI's 0.25–4; the
// language, which OpenAI reads from the text itself, told as `instructions`
// only to the models that take them (not tts-1 nor tts-1-hd, nor a compatible
// server's model, which may refuse the key). OpenAI bills tts-1 and tts-1-hd
// per character, so the characters sent are reported.
import { permanent } from '../../jobs/errors.ts';
import type { SpeechSynthesis, SpeechSynthesizer, VendorSettings } from '../capabilities.ts';
import { readBody } from '../http.ts';
import { connect } from './client.ts';

/**
 * Our neutral names, as voices every OpenAI speech model has: OpenAI's first
 * six, which are also in the newer models' list (SPEC VoiceIdsShared).
 */
const voices: Record<string, string> = { default: 'alloy', female: 'shimmer', male: 'echo' };

/** CreateSpeechRequest.input: maxLength 4096. */
const maxSpeechCharacters = 4096;

const takesInstructions = (model: string) => /^gpt-4o(-mini)?-tts/.test(model);

export function openaiSpeech(settings: VendorSettings): SpeechSynthesizer {
  const openai = connect(settings);
  return {
    async synthesize(request, call) {
      // JSON Schema's maxLength counts code points, as this does.
      const characters = [...request.text].length;
      if (characters > maxSpeechCharacters)
        throw permanent(
          'provider_rejected',
          `OpenAI reads at most ${maxSpeechCharacters} characters at a time; this text has ${characters}.`,
        );
      const audio = await openai.send(call, async (client, options) =>
        readBody(openai.name, await client.audio.speech.create(body(request, call.model), options)),
      );
      if (audio.toString('latin1', 0, 4) !== 'RIFF' || audio.toString('latin1', 8, 12) !== 'WAVE')
        throw permanent(
          'provider_invalid_response',
          `${openai.name} did not answer with the WAV audio it was asked for.`,
        );
      return { audio, speedApplied: true, characters };
    },
  };
}

function body(request: SpeechSynthesis, model: string) {
  const instructions = takesInstructions(model) ? languageInstruction(request.language) : undefined;
  return {
    model,
    input: request.text,
    // SPEC VoiceIdsOrCustomVoice: a built-in voice by name, a custom one (voice_…) as { id }.
    voice: request.voice.startsWith('voice_') ? { id: request.voice } : (voices[request.voice] ?? request.voice),
    response_format: 'wav' as const,
    speed: Math.min(4, Math.max(0.25, request.speed)),
    ...(instructions ? { instructions } : {}),
  };
}

function languageInstruction(language: string): string | undefined {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(language);
    return name && name !== language ? `Speak in ${name}.` : undefined;
  } catch {
    // Not a language tag Intl knows: OpenAI reads the language from the text.
    return undefined;
  }
}
