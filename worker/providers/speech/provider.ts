// Speech synthesis, as the worker needs it. A synchronous provider answers
// with audio; an asynchronous one accepts the work and delivers the audio
// later through the signed media-provider webhook.
import type { Config } from '../../../core/config.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { asyncSpeech } from './async.ts';
import { localSpeech } from './local.ts';
import { openAiSpeech } from './openai.ts';

export type SpeechRequest = { text: string; voice: string; language: string; speed: number };

/** Audio in any format ffmpeg reads; `speedApplied` false when ffmpeg must still change the tempo. */
export type Speech = { audio: Buffer; speedApplied: boolean };

export type SyncSpeechProvider = {
  name: string;
  mode: 'sync';
  synthesize(request: SpeechRequest, signal: AbortSignal): Promise<Speech>;
};

export type AsyncSpeechProvider = {
  name: string;
  mode: 'async';
  /** Answers the provider's reference for the work. */
  submit(request: SpeechRequest, job: { id: string; siteId: string }, signal: AbortSignal): Promise<string>;
};

export type SpeechProvider = SyncSpeechProvider | AsyncSpeechProvider;

export function speechProvider(config: Config): SpeechProvider {
  switch (config.speech.provider) {
    case 'local':
      return localSpeech(config);
    case 'openai':
      if (!config.ai.baseUrl)
        throw permanent('not_configured', 'SPEECH_PROVIDER=openai needs AI_BASE_URL (and usually AI_API_KEY).');
      return openAiSpeech(config);
    case 'async':
      if (!config.mediaProvider.url || !config.mediaProvider.webhookSecret || !config.publicUrl) {
        throw permanent(
          'not_configured',
          'SPEECH_PROVIDER=async needs MEDIA_PROVIDER_URL, MEDIA_PROVIDER_WEBHOOK_SECRET and PUBLIC_URL.',
        );
      }
      return asyncSpeech(config);
  }
}
