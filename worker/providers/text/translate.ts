// Machine translation through an OpenAI-compatible chat endpoint, one field
// at a time. There is no honest local way to translate, so without
// TEXT_PROVIDER=openai (and AI_BASE_URL) the job fails with a code that names
// the setting — when it first needs the machine, so a translate with nothing
// to translate still succeeds. Rich text is sent as it is, with the
// instruction to keep its markup, and the answer is refused unless its tags
// are the source's, in order (core/translations/markup.ts). The translate
// system prompt the job was submitted with (a glossary, a form of address)
// comes first in the instructions (./instructions.ts).
import { z } from 'zod';
import type { Config } from '../../../core/config.ts';
import { sameMarkup } from '../../../core/translations/markup.ts';
import type { Translator } from '../../../core/translations/translate.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { callProvider, readJson } from '../../../core/providers/http.ts';
import { instructionsFor } from './instructions.ts';

const reply = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1) });

const keep = {
  plain: 'The text is plain text.',
  html: 'The text is HTML: keep every tag and attribute exactly as it is, in the same order, and translate only the text between tags (and alt and title attributes).',
  markdown:
    'The text is Markdown: keep its syntax (headings, lists, emphasis, links and their URLs, code) exactly, and translate only the prose.',
};

export const notConfigured = (setting: string) =>
  permanent(
    'translation_provider_not_configured',
    `Machine translation needs a text provider: set ${setting}. mode=copy needs none.`,
  );

/** `systemPrompt`: the translate system prompt the job was submitted with (a glossary, a form of address). */
export function providerTranslator(config: Config, signal: AbortSignal, systemPrompt?: string | undefined): Translator {
  return async (text, field, from, to) => {
    if (config.text.provider !== 'openai')
      throw notConfigured('TEXT_PROVIDER=openai (with AI_BASE_URL and AI_API_KEY)');
    if (!config.ai.baseUrl) throw notConfigured('AI_BASE_URL (and AI_API_KEY) for TEXT_PROVIDER=openai');
    const response = await callProvider('The text provider', {
      url: `${config.ai.baseUrl}/chat/completions`,
      apiKey: config.ai.apiKey,
      json: {
        model: config.text.model,
        temperature: 0,
        messages: [
          {
            role: 'system',
            content: instructionsFor(systemPrompt, '', [
              `Translate the user's text from ${from} to ${to}.`,
              keep[field.format],
              'Answer with the translation only, nothing before or after it.',
            ]),
          },
          { role: 'user', content: text },
        ],
      },
      timeoutMs: config.ai.timeoutMs,
      signal,
    });
    const body = reply.safeParse(await readJson('The text provider', response));
    const translated = body.success ? body.data.choices[0]!.message.content.trim() : '';
    if (!translated)
      throw permanent('provider_invalid_response', `The text provider sent no translation of ${field.name}.`);
    if (!sameMarkup(text, translated, field.format))
      throw permanent(
        'translation_markup_changed',
        `The text provider changed the markup of ${field.name} (tags added, dropped or moved); nothing was saved.`,
      );
    return translated;
  };
}
