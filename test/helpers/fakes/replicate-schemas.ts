// The input schemas of the models the Replicate fake runs, written from each
// model's own source or published schema, and the validation Replicate does
// against them. Replicate validates with JSON Schema and answers each failure
// as an `invalid_fields` entry; the types and wording are gojsonschema's
// (observed 422 bodies: "required" with field "input" and "prompt is
// required", "number_lte" "Must be less than or equal to 4", "enum"
// "output_format must be one of the following: \"jpg\", \"png\"",
// "additional_property_not_allowed" "Additional property model is not
// allowed"; number_gte and invalid_type follow gojsonschema's locale and are
// not observed). Keys a schema does not name are NOT refused: Cog's BaseInput
// sets no extra="forbid", and no observed 422 refuses one (notes: "Unknown
// keys inside input").

export type Field = {
  type: 'string' | 'integer' | 'number' | 'boolean' | 'array';
  enum?: readonly (string | number)[];
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
};

export type ModelSchema = {
  required: readonly string[];
  properties: Readonly<Record<string, Field>>;
  /** The output the model answers: file names, as URLs by `file`. */
  output(input: Record<string, unknown>, file: (name: string) => string): unknown;
};

export type InvalidField = { type: string; field: string; description: string };

const int = (minimum?: number, maximum?: number): Field => ({ type: 'integer', minimum, maximum });
const number = (minimum: number, maximum: number): Field => ({ type: 'number', minimum, maximum });
const oneOf = (...values: (string | number)[]): Field => ({
  type: typeof values[0] === 'number' ? 'integer' : 'string',
  enum: values,
});

// replicate/cog-flux predict.py @51e81e0: Inputs, SchnellPredictor.predict, DevPredictor.predict.
const fluxShared = {
  prompt: { type: 'string' },
  aspect_ratio: oneOf('1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'),
  num_outputs: int(1, 4),
  seed: { type: 'integer', nullable: true },
  output_format: oneOf('webp', 'jpg', 'png'),
  output_quality: int(0, 100),
  disable_safety_checker: { type: 'boolean' },
  go_fast: { type: 'boolean' },
  megapixels: oneOf('1', '0.25'),
} as const satisfies Record<string, Field>;

// postprocess writes out-{i}.{output_format}; the output is the list (List[Path]).
const fluxOutput = (input: Record<string, unknown>, file: (name: string) => string) =>
  Array.from({ length: Number(input.num_outputs ?? 1) }, (_, i) =>
    file(`out-${i}.${String(input.output_format ?? 'webp')}`),
  );

export const fluxSchnell: ModelSchema = {
  required: ['prompt'],
  properties: { ...fluxShared, num_inference_steps: int(1, 4) },
  output: fluxOutput,
};

export const fluxDev: ModelSchema = {
  required: ['prompt'],
  properties: {
    ...fluxShared,
    image: { type: 'string', nullable: true },
    prompt_strength: number(0, 1),
    num_inference_steps: int(1, 50),
    guidance: number(0, 10),
  },
  output: fluxOutput,
};

// bytedance/seedance-1-pro-fast: the model's Input schema on Replicate (as
// copied in a public compilation of model schemas, find_string 1547194121;
// Replicate's page itself is not in the corpus). Output: one URI.
export const seedanceProFast: ModelSchema = {
  required: ['prompt'],
  properties: {
    prompt: { type: 'string' },
    image: { type: 'string', nullable: true },
    duration: int(2, 12),
    resolution: oneOf('480p', '720p', '1080p'),
    aspect_ratio: oneOf('16:9', '4:3', '1:1', '3:4', '9:16', '21:9', '9:21'),
    fps: oneOf(24),
    camera_fixed: { type: 'boolean' },
    seed: { type: 'integer', nullable: true },
  },
  output: (_input, file) => file('output.mp4'),
};

// minimax/speech-02-hd: its Input schema (same compilation; the sibling
// speech-02-turbo's version pages on replicate.com agree). Output: one URI (mp3).
export const speech02Hd: ModelSchema = {
  required: ['text'],
  properties: {
    text: { type: 'string' },
    voice_id: { type: 'string' },
    speed: number(0.5, 2),
    volume: number(0, 10),
    pitch: int(-12, 12),
    emotion: oneOf('auto', 'neutral', 'happy', 'sad', 'angry', 'fearful', 'disgusted', 'surprised'),
    sample_rate: oneOf(8000, 16000, 22050, 24000, 32000, 44100),
    bitrate: oneOf(32000, 64000, 128000, 256000),
    channel: oneOf('mono', 'stereo'),
    language_boost: oneOf(
      ...'None Automatic Chinese Chinese,Yue English Arabic Russian Spanish French Portuguese German Turkish Dutch'.split(
        ' ',
      ),
      ...'Ukrainian Vietnamese Indonesian Japanese Italian Korean Thai Polish Romanian Greek Czech Finnish Hindi'.split(
        ' ',
      ),
    ),
    english_normalization: { type: 'boolean' },
  },
  output: (_input, file) => file('output.mp3'),
};

/** Official models, run at /v1/models/{owner}/{name}/predictions or as `version: "owner/name"`. */
export const officialModels: ReadonlyMap<string, ModelSchema> = new Map([
  ['black-forest-labs/flux-schnell', fluxSchnell],
  ['black-forest-labs/flux-dev', fluxDev],
  ['bytedance/seedance-1-pro-fast', seedanceProFast],
  ['minimax/speech-02-hd', speech02Hd],
]);

const typeOf = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value;

const quoted = (value: string | number) => JSON.stringify(value);

/** What Replicate would refuse in `input` for this schema. */
export function validateInput(schema: ModelSchema, input: Record<string, unknown>): InvalidField[] {
  const invalid: InvalidField[] = [];
  for (const name of schema.required)
    if (input[name] === undefined)
      invalid.push({ type: 'required', field: 'input', description: `${name} is required` });
  for (const [name, value] of Object.entries(input)) {
    const field = schema.properties[name];
    if (!field || value === undefined) continue;
    const where = `input.${name}`;
    const given = typeOf(value);
    if (value === null && field.nullable) continue;
    if (given !== field.type && !(field.type === 'number' && given === 'integer')) {
      invalid.push({
        type: 'invalid_type',
        field: where,
        description: `Invalid type. Expected: ${field.type}, given: ${given}`,
      });
      continue;
    }
    if (field.enum && !field.enum.includes(value as string | number))
      invalid.push({
        type: 'enum',
        field: where,
        description: `${name} must be one of the following: ${field.enum.map(quoted).join(', ')}`,
      });
    if (field.maximum !== undefined && (value as number) > field.maximum)
      invalid.push({ type: 'number_lte', field: where, description: `Must be less than or equal to ${field.maximum}` });
    if (field.minimum !== undefined && (value as number) < field.minimum)
      invalid.push({
        type: 'number_gte',
        field: where,
        description: `Must be greater than or equal to ${field.minimum}`,
      });
  }
  return invalid;
}
