// Text to speech: the job's plan is tried in turn until a provider speaks, ffmpeg encodes into the format asked
// for, the file is stored under a key derived from the job (a rerun after a
// crash overwrites it rather than leaving a second file), and the settling
// transaction records the media item and debits the seconds of audio.
import { speechJobInput, type SpeechInput } from '../../core/media/speech.ts';
import { isPending } from '../../core/providers/capabilities.ts';
import { planFor, type PlannedCall } from '../../core/providers/plan.ts';
import { adapterFor } from '../../core/providers/registry.ts';
import { audioFormats, encodeAudio, probeBuffer } from '../media/ffmpeg.ts';
import { inTurn } from '../providers/chain.ts';
import { localSpeech } from '../providers/speech/local.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext, type Outcome } from '../job.ts';
import { callOf, webhookUrl } from './providers.ts';

async function store(
  input: SpeechInput,
  audio: Buffer,
  speedApplied: boolean,
  context: JobContext,
  call: PlannedCall,
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
    // What the vendor bills: ElevenLabs and OpenAI by the characters spoken, the local voice by the seconds made.
    units: call.unit === '1k_characters' ? input.text.length / 1000 : seconds,
    call,
    output: {
      duration_seconds: seconds,
      format: input.format,
      size_bytes: stored.size,
      characters: input.text.length,
      provider: call.vendor,
      model: call.model,
      placeholder: call.vendor === 'local',
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
  input: speechJobInput,
  async run(input, context) {
    const plan = input.providers ?? planFor(context.config.providers, 'speech', { model: input.model });
    await context.progress(0.1, 'synthesising');
    const request = { text: input.text, voice: input.voice, language: input.language, speed: input.speed };
    const { value, call } = await inTurn(
      'speech',
      plan,
      context,
      (call) =>
        call.vendor === 'local'
          ? localSpeech(context.config).synthesize(request, context.signal)
          : adapterFor(context.config, 'speech', call.vendor).synthesize(request, {
              model: call.model,
              signal: context.signal,
              webhookUrl: webhookUrl(context, call.vendor),
            }),
      (spoken) => (isPending(spoken) ? 'pending' : 'succeeded'),
    );
    if (isPending(value)) return { status: 'waiting', provider: call.vendor, providerRef: value.ref };
    return store(input, value.audio, value.speedApplied, context, call);
  },
  async finish(input, delivered, context) {
    const call = callOf(input.providers, context, 'speech');
    const adapter = adapterFor(context.config, 'speech', call.vendor);
    if (!adapter.collect) throw permanent('provider_invalid_response', `${call.vendor} delivered speech unasked.`);
    const speech = await adapter.collect(delivered, { model: call.model, signal: context.signal });
    return store(input, speech.audio, speech.speedApplied, context, call);
  },
});
