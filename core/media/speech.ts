// Text to speech, as submitted: shared by the endpoint that validates it and
// the worker job that performs it.
import { z } from 'zod';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import type { Submission } from '../jobs/submit.ts';
import { modelField, planField, planFor, specOf } from '../providers/plan.ts';

export const speechInput = z
  .object({
    text: z
      .string()
      .trim()
      .min(1)
      .describe('What to say; at most SPEECH_MAX_CHARACTERS characters, and at most what the model takes'),
    model: modelField('speech'),
    voice: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, - and _')
      .default('default')
      .describe('default, female, male (each provider maps them to a voice of its own), or a voice the provider knows'),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 tag such as en or en-US')
      .default('en'),
    speed: z.number().min(0.5).max(2).default(1),
    format: z.enum(['mp3', 'wav', 'ogg']).default('mp3'),
    title: z.string().trim().max(200).optional().describe('Title of the media item made'),
  })
  .meta({ id: 'SpeechRequest' });

export type SpeechInput = z.output<typeof speechInput>;

/** What the speech job is given: the request and its plan. */
export const speechJobInput = speechInput.safeExtend({ providers: planField });
export type SpeechJobInput = z.output<typeof speechJobInput>;

// Speech runs at about 15 characters a second at speed 1; reserve for 12 so
// slow voices are covered, plus a second of leading and trailing silence.
export const estimateSeconds = (input: Pick<SpeechInput, 'text' | 'speed'>) =>
  Math.ceil(input.text.length / 12 / input.speed) + 1;

const tooLong = (limit: number, by?: string) =>
  new Problem(422, `The text is longer than ${limit} characters${by ? ` (${by})` : ''}.`, {
    errors: [{ path: 'body.text', message: `at most ${limit} characters` }],
  });

/**
 * The speech job for a request: 422 past the configured length
 * (SPEECH_MAX_CHARACTERS) or past what every planned model takes, or for a
 * model not allowed; reserving the estimated seconds.
 */
export function speechSubmission(config: Pick<Config, 'speech' | 'providers'>, input: SpeechInput): Submission {
  if (input.text.length > config.speech.maxCharacters) throw tooLong(config.speech.maxCharacters);
  const plan = planFor(config.providers, 'speech', { model: input.model });
  const providers = plan.filter((call) => input.text.length <= (specOf('speech', call)?.maxCharacters ?? Infinity));
  if (providers.length === 0) throw tooLong(specOf('speech', plan[0]!)!.maxCharacters!, plan[0]!.model);
  const seconds = estimateSeconds(input);
  return {
    kind: 'speech',
    input: { ...input, providers },
    estimatedUnits: seconds,
    plan: { calls: providers, estimate: { second: seconds, '1k_characters': input.text.length / 1000 } },
  };
}
