// POST /v1/images/generations and /v1/images/edits, as OpenAI's reference
// describes them (openai/openai-openapi f85dbe2, components.schemas.
// CreateImageRequest and CreateImageEditRequest; "SPEC" below), with the
// refusals users observed. OpenAI names only the first thing wrong with a
// request (observed, find_string 69662765059), so each check returns the first.
import sharp from 'sharp';
import {
  invalidType,
  invalidValue,
  missingParameter,
  outOfRange,
  type Refusal,
  refusal,
  tooLong,
  tooMany,
  unknownParameter,
} from './errors.ts';
import { picture, type PictureFormat } from './media.ts';

/** Shut down, and answered so (dall-e: 2026-05-12; gpt-image-1: 2026-10-23, third-party report). */
const retired = ['dall-e-2', 'dall-e-3', 'gpt-image-1'];
/** Arbitrary sizes on a grid (SPEC CreateImageRequest.size). */
const flexible = ['gpt-image-2', 'gpt-image-2-2026-04-21'];
/** Three sizes; OpenAI shuts these down on 2026-12-01, after which they belong in `retired`. */
const fixed = ['gpt-image-1.5', 'gpt-image-1-mini'];
/** SPEC CreateImageEditRequest.model lists chatgpt-image-latest for edits only. */
const editOnly = ['chatgpt-image-latest'];

/** SPEC CreateImageRequest.properties. */
const generationKeys = [
  'prompt',
  'model',
  'n',
  'quality',
  'response_format',
  'output_format',
  'output_compression',
  'stream',
  'partial_images',
  'size',
  'moderation',
  'background',
  'style',
  'user',
];
/** SPEC CreateImageEditRequest.properties (`image[]` is how SDKs send an array: openai-node uploads.ts). */
const editKeys = [
  'image',
  'image[]',
  'prompt',
  'mask',
  'background',
  'model',
  'n',
  'size',
  'response_format',
  'output_format',
  'output_compression',
  'user',
  'input_fidelity',
  'stream',
  'partial_images',
  'quality',
];
/** SPEC: "This parameter isn't supported for the GPT image models" (response_format) / "only supported for dall-e-3" (style). */
const notForGptModels = ['response_format', 'style'];

/** The observed answer for a retired model is a 400 (learnpack/learnpack#2078); its code and param are not verified. */
const retiredModel = (model: string) =>
  refusal(400, `The model '${model}' does not exist.`, { param: 'model', code: 'model_not_found' });

export type ImageAnswerPlan = { n: number; width: number; height: number; format: PictureFormat; quality: string };

type Fields = Record<string, unknown>;

/** The first thing OpenAI would refuse in a generation request; else what to answer. */
export function checkGeneration(body: Fields): Refusal | ImageAnswerPlan {
  const unknown = Object.keys(body).find((key) => !generationKeys.includes(key));
  if (unknown) return unknownParameter(unknown);
  if (body.prompt === undefined) return missingParameter('prompt');
  if (typeof body.prompt !== 'string') return invalidType('prompt', 'a string', body.prompt);
  // SPEC CreateImageRequest.model: "Defaults to dall-e-2", which is shut down.
  const model = body.model ?? 'dall-e-2';
  if (typeof model !== 'string') return invalidType('model', 'a string', model);
  if (retired.includes(model)) return retiredModel(model);
  if (![...flexible, ...fixed].includes(model)) return invalidValue('model', model, [...flexible, ...fixed]);
  return checkCommon(body, model, 'generation');
}

export type Upload = { field: string; filename: string; mimeType: string; bytes: Buffer };

/** The first thing OpenAI would refuse in an edit request (multipart: every field a string); else what to answer. */
export async function checkEdit(fields: Fields, files: Upload[]): Promise<Refusal | ImageAnswerPlan> {
  const unknown = [...Object.keys(fields), ...files.map((file) => file.field)].find((key) => !editKeys.includes(key));
  if (unknown) return unknownParameter(unknown);
  const images = files.filter((file) => file.field === 'image' || file.field === 'image[]');
  if (images.length === 0) return missingParameter('image');
  if (fields.prompt === undefined) return missingParameter('prompt');
  // SPEC CreateImageEditRequest.model: defaults to gpt-image-1.5; dall-e-3 is not in its list.
  const model = String(fields.model ?? 'gpt-image-1.5');
  if (retired.includes(model)) return retiredModel(model);
  if (![...flexible, ...fixed, ...editOnly].includes(model))
    return invalidValue('model', model, [...flexible, ...fixed, ...editOnly]);
  // SPEC CreateImageEditRequest.image: up to 16 png, webp or jpg files, each under 50 MB.
  if (images.length > 16) return tooMany('image', 16, images.length);
  for (const [index, image] of images.entries()) {
    // Named as OpenAI names it: 'image', or 'image[0]' for an array (observed, find_string 68562771445).
    const name = image.field === 'image[]' ? `image[${index}]` : 'image';
    const typeRefusal = mimeRefusal(name, image.mimeType, ['image/jpeg', 'image/png', 'image/webp']);
    if (typeRefusal) return typeRefusal;
    if (image.bytes.length >= 50 * 1024 * 1024)
      return refusal(400, `Invalid file '${name}': the file must be smaller than 50 MB.`, { param: name }); // wording not verified
  }
  const mask = files.find((file) => file.field === 'mask');
  if (mask) {
    // SPEC CreateImageEditRequest.mask: a PNG under 4 MB with the dimensions of (the first) image. Wording not verified.
    const typeRefusal = mimeRefusal('mask', mask.mimeType, ['image/png']);
    if (typeRefusal) return typeRefusal;
    if (mask.bytes.length >= 4 * 1024 * 1024)
      return refusal(400, "Invalid file 'mask': the file must be smaller than 4 MB.", { param: 'mask' });
    const [maskSize, imageSize] = await Promise.all([dimensions(mask.bytes), dimensions(images[0]!.bytes)]);
    if (!maskSize || !imageSize || maskSize !== imageSize)
      return refusal(400, 'Invalid mask: the mask must have the same dimensions as the image.', { param: 'mask' });
  }
  // SPEC InputFidelity: "unsupported for gpt-image-1-mini"; wording not verified.
  if (fields.input_fidelity !== undefined) {
    if (!['high', 'low'].includes(String(fields.input_fidelity)))
      return invalidValue('input_fidelity', fields.input_fidelity, ['high', 'low']);
    if (model === 'gpt-image-1-mini')
      return refusal(400, "Unsupported parameter: 'input_fidelity' is not supported with this model.", {
        param: 'input_fidelity',
        code: 'unsupported_parameter',
      });
  }
  // Multipart carries text: numbers are read as OpenAI's form parser would.
  const numeric = (key: string) => (fields[key] === undefined ? undefined : Number(fields[key]));
  return checkCommon(
    {
      ...fields,
      n: numeric('n'),
      output_compression: numeric('output_compression'),
      partial_images: numeric('partial_images'),
    },
    model,
    'edit',
  );
}

/** Observed: "Invalid file 'image': unsupported mimetype ('application/octet-stream'). Supported file formats are …" (find_string 56763442412), code from 68562771445. */
function mimeRefusal(name: string, mimeType: string, supported: string[]): Refusal | undefined {
  if (supported.includes(mimeType)) return undefined;
  const list = supported.length === 1 ? `'${supported[0]}'` : supported.map((type) => `'${type}'`).join(', ');
  return refusal(
    400,
    `Invalid file '${name}': unsupported mimetype ('${mimeType}'). Supported file formats are ${list.replace(/, ('[^']+')$/, ', and $1')}.`,
    { param: name, code: 'unsupported_file_mimetype' },
  );
}

const dimensions = async (bytes: Buffer) => {
  try {
    const { width, height } = await sharp(bytes).metadata();
    return `${width}x${height}`;
  } catch {
    return undefined;
  }
};

/** The rules both endpoints share for the GPT image models (SPEC property descriptions). */
function checkCommon(body: Fields, model: string, kind: 'generation' | 'edit'): Refusal | ImageAnswerPlan {
  const inapplicable = notForGptModels.find((key) => body[key] !== undefined);
  if (inapplicable) return unknownParameter(inapplicable);
  const prompt = String(body.prompt);
  // SPEC prompt: "The maximum length is 32000 characters for the GPT image models".
  if ([...prompt].length > 32_000) return tooLong('prompt', 32_000, [...prompt].length);
  // SPEC n: "Must be between 1 and 10".
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n)) return invalidType('n', 'an integer', n);
  if (n < 1 || n > 10) return outOfRange('n', n, { min: 1, max: 10, integer: true });
  const size = body.size ?? 'auto';
  if (typeof size !== 'string') return invalidType('size', 'a string', size);
  const sizeRefusal = flexible.includes(model) ? flexibleSizeRefusal(size) : fixedSizeRefusal(size);
  if (sizeRefusal) return sizeRefusal;
  // SPEC quality: low/medium/high/auto for the GPT image models (edits also list standard).
  const qualities = kind === 'edit' ? ['standard', 'low', 'medium', 'high', 'auto'] : ['low', 'medium', 'high', 'auto'];
  const quality = body.quality ?? 'auto';
  if (!qualities.includes(String(quality))) return invalidValue('quality', quality, qualities);
  const format = body.output_format ?? 'png';
  if (!['png', 'jpeg', 'webp'].includes(String(format)))
    return invalidValue('output_format', format, ['png', 'jpeg', 'webp']);
  if (body.output_compression !== undefined) {
    const compression = body.output_compression;
    if (typeof compression !== 'number' || !Number.isInteger(compression))
      return invalidType('output_compression', 'an integer', compression);
    if (compression < 0 || compression > 100)
      return outOfRange('output_compression', compression, { min: 0, max: 100, integer: true });
    // SPEC output_compression: "only supported … with the webp or jpeg output formats"; wording not verified.
    if (format === 'png')
      return refusal(400, "Invalid 'output_compression': only supported for the jpeg and webp output formats.", {
        param: 'output_compression',
      });
  }
  const background = body.background ?? 'auto';
  if (!['transparent', 'opaque', 'auto'].includes(String(background)))
    return invalidValue('background', background, ['transparent', 'opaque', 'auto']);
  // SPEC background: "When using transparent, set the output format to png or webp"; wording not verified.
  if (background === 'transparent' && format === 'jpeg')
    return refusal(400, "Invalid 'background': transparent backgrounds need the png or webp output format.", {
      param: 'background',
    });
  if (kind === 'generation' && body.moderation !== undefined && !['low', 'auto'].includes(String(body.moderation)))
    return invalidValue('moderation', body.moderation, ['low', 'auto']);
  if (body.stream !== undefined && body.stream !== false && body.stream !== 'false')
    throw new Error('The OpenAI fake does not stream images (stream: true).');
  if (body.partial_images !== undefined) {
    const partial = body.partial_images;
    if (typeof partial !== 'number' || !Number.isInteger(partial) || partial < 0 || partial > 3)
      return outOfRange('partial_images', Number(partial), { min: 0, max: 3, integer: true });
  }
  if (body.user !== undefined && typeof body.user !== 'string') return invalidType('user', 'a string', body.user);
  const [width, height] = size === 'auto' ? [1024, 1024] : size.split('x').map(Number);
  return { n, width: width!, height: height!, format: format as PictureFormat, quality: String(quality) };
}

/** SPEC size for the earlier GPT image models. Observed wording: find_string 3536317888. */
const fixedSizeRefusal = (size: string) =>
  ['1024x1024', '1024x1536', '1536x1024', 'auto'].includes(size)
    ? undefined
    : invalidValue('size', size, ['1024x1024', '1024x1536', '1536x1024', 'auto']);

/**
 * SPEC size for gpt-image-2: sides divisible by 16, ratio between 1:3 and 3:1,
 * up to 3840x2160, "the model's current pixel and edge limits" (655,360 to
 * 8,294,400 pixels, 3840 a side: openclaw/openclaw#118476, tried live). The
 * divisibility message is observed (jezweb/claude-skills#91); the others follow it.
 */
function flexibleSizeRefusal(size: string): Refusal | undefined {
  if (size === 'auto') return undefined;
  const match = /^(\d+)x(\d+)$/.exec(size);
  const invalid = (why: string) =>
    refusal(400, `Invalid size '${size}'. ${why}`, { param: 'size', code: 'invalid_value' });
  if (!match) return invalid('Sizes are written WIDTHxHEIGHT.');
  const [width, height] = [Number(match[1]), Number(match[2])];
  if (width % 16 !== 0 || height % 16 !== 0) return invalid('Width and height must both be divisible by 16.');
  if (width / height > 3 || height / width > 3) return invalid('The aspect ratio must be between 1:3 and 3:1.');
  if (width > 3840 || height > 3840) return invalid('Width and height must be at most 3840.');
  if (width * height < 655_360 || width * height > 8_294_400)
    return invalid('The image must have between 655360 and 8294400 pixels.');
  return undefined;
}

/** SPEC ImagesResponse: base64 pictures, and (GPT image models) the settings used and the tokens. */
export async function imagesAnswer(plan: ImageAnswerPlan) {
  const bytes = await picture(plan.width, plan.height, plan.format);
  const imageTokens = Math.ceil((plan.width * plan.height) / 1024);
  return {
    created: Math.floor(Date.now() / 1000),
    data: Array.from({ length: plan.n }, () => ({ b64_json: bytes.toString('base64') })),
    background: 'opaque',
    output_format: plan.format,
    size: `${plan.width}x${plan.height}`,
    quality: plan.quality === 'auto' ? 'high' : plan.quality,
    usage: {
      input_tokens: 20,
      output_tokens: imageTokens * plan.n,
      total_tokens: 20 + imageTokens * plan.n,
      input_tokens_details: { text_tokens: 20, image_tokens: 0 },
    },
  };
}
