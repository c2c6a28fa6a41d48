// Speech by the asynchronous media provider: accepted now, delivered later
// through the signed webhook.
import type { Config } from '../../../core/config.ts';
import { submitToMediaProvider } from '../mediaprovider.ts';
import type { AsyncSpeechProvider } from './provider.ts';

export function asyncSpeech(config: Config): AsyncSpeechProvider {
  return {
    name: 'mediaprovider',
    mode: 'async',
    submit: (request, job, signal) => submitToMediaProvider(config, 'speech', request, job, signal),
  };
}
