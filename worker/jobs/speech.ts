// Text to speech: the provider speaks, ffmpeg encodes into the format asked
// for, the file is stored under a key derived from the job (a rerun after a
// crash overwrites it rather than leaving a second file), and the settling
// transaction records the media item and debits the seconds of audio.
import { speechInput, type SpeechInput } from '../../core/media/speech.ts';
import { audioFormats, encodeAudio, probeBuffer } from '../media/ffmpeg.ts';
import { deliveredFile } from '../providers/mediaprovider.ts';
import { speechProvider } from '../providers/speech/provider.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext, type Outcome } from './handler.ts';

async function store(
  input: SpeechInput,
  audio: Buffer,
  speedApplied: boolean,
  context: JobContext,
  provider: string,
): Promise<Outcome> {
  const { job, config, storage, signal } = context;
  await context.progress(0.6, 'encoding');
  const encoded = await encodeAudio(config, audio, input.format, signal, speedApplied ? 1 : input.speed).catch(
    (error: unknown) => {
      // The same bytes would fail the same way on every retry.
      if (signal.aborted) throw error;
      throw permanent('provider_invalid_response', 'The audio the provider returned could not be decoded.', error);
    },
  );
  const { durationSeconds } = await probeBuffer(config, encoded);
  if (!(durationSeconds > 0)) throw permanent('speech_failed', 'The provider returned no audible speech.');
  await context.progress(0.85, 'storing');
  const key = `${job.tenant_id}/${job.site_id}/speech-${job.id}.${input.format}`;
  const stored = await storage.put(key, encoded, audioFormats[input.format].mimeType);
  const seconds = Math.round(durationSeconds * 1000) / 1000;
  return {
    status: 'succeeded',
    units: seconds,
    output: {
      duration_seconds: seconds,
      format: input.format,
      size_bytes: stored.size,
      characters: input.text.length,
      provider,
    },
    media: [
      {
        kind: 'audio',
        mimeType: audioFormats[input.format].mimeType,
        sizeBytes: stored.size,
        storageKey: key,
        fileName: `speech.${input.format}`,
        durationSeconds: seconds,
        title: input.title ?? input.text.slice(0, 80),
      },
    ],
  };
}

export default defineJob({
  input: speechInput,
  async run(input, context) {
    const provider = speechProvider(context.config);
    await context.progress(0.1, 'synthesising');
    if (provider.mode === 'async') {
      const ref = await provider.submit(input, { id: context.job.id, siteId: context.job.site_id }, context.signal);
      return { status: 'waiting', provider: provider.name, providerRef: ref };
    }
    const speech = await provider.synthesize(input, context.signal);
    return store(input, speech.audio, speech.speedApplied, context, provider.name);
  },
  async finish(input, result, context) {
    const audio = await deliveredFile(result, 'audio', context);
    return store(input, audio, true, context, 'mediaprovider');
  },
});
