// Speech on Replicate (minimax/speech-02-hd): a few seconds of work, so the
// request is held while it runs and the audio (an mp3 URL) usually comes back
// in the answer; otherwise its webhook finishes it. Input from the model's
// schema on Replicate: text, voice_id (its system voices), speed 0.5–2, and
// language_boost, a language named in English.
import type { Call, Speech, SpeechSynthesis, SpeechSynthesizer, VendorSettings } from '../capabilities.ts';
import { isPending } from '../capabilities.ts';
import { outputUrls, predict, replicateClient } from './client.ts';

// Our neutral voice names, as three of MiniMax's system voices; any other name is a voice id of the vendor's.
const voices: Record<string, string> = { default: 'Wise_Woman', female: 'Calm_Woman', male: 'Deep_Voice_Man' };

// language_boost's enum (the model's schema), by BCP 47 language subtag.
const languages: Record<string, string> = {
  zh: 'Chinese',
  yue: 'Chinese,Yue',
  en: 'English',
  ar: 'Arabic',
  ru: 'Russian',
  es: 'Spanish',
  fr: 'French',
  pt: 'Portuguese',
  de: 'German',
  tr: 'Turkish',
  nl: 'Dutch',
  uk: 'Ukrainian',
  vi: 'Vietnamese',
  id: 'Indonesian',
  ja: 'Japanese',
  it: 'Italian',
  ko: 'Korean',
  th: 'Thai',
  pl: 'Polish',
  ro: 'Romanian',
  el: 'Greek',
  cs: 'Czech',
  fi: 'Finnish',
  hi: 'Hindi',
};

export function speechInput(request: SpeechSynthesis): Record<string, unknown> {
  const language = request.language.toLowerCase();
  const boost = language === 'zh-hk' ? 'Chinese,Yue' : languages[language.split('-')[0] ?? ''];
  return {
    text: request.text,
    voice_id: voices[request.voice] ?? request.voice,
    speed: request.speed,
    language_boost: boost ?? 'Automatic',
  };
}

export function replicateSpeech(settings: VendorSettings): SpeechSynthesizer {
  const client = replicateClient(settings);
  const collect = async (output: unknown, call: Call): Promise<Speech> => {
    const file = await client.download(outputUrls(output)[0]!, call.signal);
    return { audio: file.bytes, speedApplied: true };
  };
  return {
    async synthesize(request, call) {
      const started = await predict(client, call, speechInput(request), true);
      if (isPending(started)) return started;
      return { ...(await collect(started.output, call)), characters: request.text.length };
    },
    collect,
  };
}
