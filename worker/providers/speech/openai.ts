// Speech from an OpenAI-compatible endpoint: POST {AI_BASE_URL}/audio/speech.
import type { Config } from '../../../core/config.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { callProvider, readBody } from '../../../core/providers/http.ts';
import type { SyncSpeechProvider } from './provider.ts';

// Our neutral voice names mapped to the endpoint's; anything else is passed through.
const voices: Record<string, string> = { default: 'alloy', female: 'nova', male: 'onyx' };

export function openAiSpeech(config: Config): SyncSpeechProvider {
  return {
    name: 'openai',
    mode: 'sync',
    async synthesize(request, signal) {
      const response = await callProvider('The speech provider', {
        url: `${config.ai.baseUrl}/audio/speech`,
        apiKey: config.ai.apiKey,
        json: {
          model: config.ai.speechModel,
          input: request.text,
          voice: voices[request.voice] ?? request.voice,
          speed: request.speed,
          response_format: 'wav',
        },
        timeoutMs: config.ai.timeoutMs,
        signal,
      });
      // An error or a page sent as a success is garbage, however it is worded (ffmpeg need not try it).
      const type = response.headers.get('content-type') ?? '';
      if (/^(application\/(problem\+)?json|text\/)/i.test(type)) {
        await response.body?.cancel().catch(() => {});
        throw permanent('provider_invalid_response', `The speech provider answered ${type.split(';')[0]}, not audio.`);
      }
      return { audio: await readBody('The speech provider', response), speedApplied: true };
    },
  };
}
