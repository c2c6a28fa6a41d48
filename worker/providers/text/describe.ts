// Describing a media item for its alt text, caption and tags. Locally this is
// done from what is known without looking at the content — kind, size,
// orientation, dominant colour, duration, file name — and the result says so.
// With a language model named in TEXT_PROVIDERS it looks at the image (its
// smallest variant, where the model sees pictures) and writes them.
import { z } from 'zod';
import type { ContentPart } from '../../../core/providers/capabilities.ts';
import { chatJson, type ChatContext } from './chat.ts';

export type Described = { alt: string; caption: string; tags: string[]; source: string; note: string };

export type Subject = {
  kind: string;
  mime_type: string;
  width: number | null;
  height: number | null;
  duration_seconds: number | null;
  dominant_color: string | null;
  file_name: string;
  title: string;
};

function colourName(hex: string | null): string | null {
  if (!hex) return null;
  const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const lightness = (max + min) / 2;
  const saturation = max === min ? 0 : (max - min) / (1 - Math.abs(2 * lightness - 1));
  if (lightness < 0.15) return 'black';
  if (lightness > 0.9) return 'white';
  if (saturation < 0.15) return 'grey';
  const hue =
    max === r ? ((g - b) / (max - min) + 6) % 6 : max === g ? (b - r) / (max - min) + 2 : (r - g) / (max - min) + 4;
  return (
    ['red', 'orange', 'yellow', 'green', 'green', 'cyan', 'blue', 'blue', 'purple', 'pink', 'pink', 'red'][
      Math.floor(hue * 2) % 12
    ] ?? null
  );
}

/** The file name's words, without camera prefixes and numbers: `IMG_2041-harbour-at-night.png` → harbour at night. */
const words = (fileName: string) =>
  fileName
    .replace(/\.[a-z0-9]{2,5}$/i, '')
    .split(/[^\p{L}\p{N}]+/u)
    .map((word) => word.toLowerCase())
    .filter(
      (word) =>
        word && !/^\d+$/.test(word) && !['img', 'dsc', 'image', 'photo', 'file', 'generated', 'speech'].includes(word),
    );

// Too short to be a useful tag: at, of, a...
const taggable = (word: string) => word.length >= 3;

export function describeLocally(subject: Subject): Described {
  const colour = colourName(subject.dominant_color);
  const named = words(subject.file_name);
  const orientation =
    subject.width && subject.height
      ? subject.width > subject.height
        ? 'landscape'
        : subject.width < subject.height
          ? 'portrait'
          : 'square'
      : null;
  const size = subject.width && subject.height ? `${subject.width}×${subject.height}` : null;
  const duration = subject.duration_seconds ? `${subject.duration_seconds.toFixed(1)} seconds` : null;
  const about = named.length > 0 ? ` of ${named.join(' ')}` : '';
  const parts = [orientation, subject.kind, about.trim() ? about.trim() : null].filter(Boolean).join(' ');
  const alt = `${parts.charAt(0).toUpperCase()}${parts.slice(1)}${colour ? `, mostly ${colour}` : ''}${size ? ` (${size})` : ''}${duration ? `, ${duration} long` : ''}.`;
  const caption =
    subject.title ||
    (named.length > 0
      ? named.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join(' ')
      : `Untitled ${subject.kind}`);
  const tags = [
    ...new Set(
      [subject.kind, orientation, colour, subject.mime_type.split('/')[1], ...named.filter(taggable)].filter(
        (tag): tag is string => Boolean(tag),
      ),
    ),
  ].slice(0, 20);
  return {
    alt,
    caption,
    tags,
    source: 'local',
    note: 'Made from the file’s technical metadata and name, not from its content; name a language model in TEXT_PROVIDERS for descriptions of what it shows.',
  };
}

const fields = z.object({
  alt: z.string().max(1000),
  caption: z.string().max(2000),
  tags: z.array(z.string().max(50)).max(20),
});

export async function describeWithProvider(
  context: ChatContext,
  subject: Subject,
  image: Buffer | null,
): Promise<Described> {
  const facts = `A ${subject.kind} (${subject.mime_type}) named "${subject.file_name}"${subject.title ? `, titled "${subject.title}"` : ''}.`;
  const content: ContentPart[] = [
    {
      type: 'text',
      text: `${facts} Answer with JSON only: {"alt": "...", "caption": "...", "tags": ["..."]} (alt text for screen readers, a one-sentence caption, up to 10 lower-case tags).`,
    },
  ];
  if (image) content.push({ type: 'image', image: { bytes: image, contentType: 'image/webp' } });
  const { answer, call } = await chatJson(context, {
    instructions: 'You describe media items for a content library.',
    content,
    answer: fields,
    shape: 'alt, caption and tags',
  });
  return {
    ...answer,
    tags: answer.tags.map((tag) => tag.toLowerCase()),
    source: call.vendor,
    note: `Written by ${call.model}.`,
  };
}
