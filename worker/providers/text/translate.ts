// Machine translation by the language models of TEXT_PROVIDERS, one field
// at a time. There is no honest local way to translate, so without a model
// named there the job fails with a code that names the setting — when it first needs the machine, so a translate with nothing
// to translate still succeeds. Rich text is sent as it is, with the
// instruction to keep its markup, and the answer is refused unless its tags
// are the source's, in order (core/translations/markup.ts). The translate
// system prompt the job was submitted with (a glossary, a form of address)
// comes first in the instructions (./instructions.ts).
import { sameMarkup } from '../../../core/translations/markup.ts';
import type { Translator } from '../../../core/translations/translate.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import { chatText, usesLanguageModel, type ChatContext } from './chat.ts';
import { instructionsFor } from './instructions.ts';

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
export function providerTranslator(context: ChatContext, systemPrompt?: string): Translator {
  return async (text, field, from, to) => {
    // A test job calls no model (core/jobs/test-mode.ts): the text is kept as it is, as mode=copy keeps it,
    // so an app's translation flow can be tried for free; the job's output says it is a test.
    if (context.job.test_mode) return text;
    if (!usesLanguageModel(context.config)) throw notConfigured('TEXT_PROVIDERS (e.g. openai, with OPENAI_API_KEY)');
    const { text: answer } = await chatText(context, {
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
    });
    const translated = answer.trim();
    if (!translated)
      throw permanent('provider_invalid_response', `The language model sent no translation of ${field.name}.`);
    if (!sameMarkup(text, translated, field.format))
      throw permanent(
        'translation_markup_changed',
        `The language model changed the markup of ${field.name} (tags added, dropped or moved); nothing was saved.`,
      );
    return translated;
  };
}
