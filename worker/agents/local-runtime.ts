// The local runtime, for a run with no language model to call (none in
// TEXT_PROVIDERS, or test mode): honest about what it is, it calls no tools
// and writes nothing; it searches the agent's knowledge base with the
// question, as the member who asked, and answers with the passages that match
// best, each cited. It costs nothing.
import type { RunStep } from '../../core/agents/run-steps.ts';
import type { RunJobInput } from '../../core/agents/runs.ts';
import { Sources } from '../../core/agents/citations.ts';
import { knowledgeSearchResultSchema } from '../../core/knowledge/search.ts';
import type { LoopResult } from './loop.ts';
import { retrievalStep } from './retrieval.ts';
import type { RunScope } from './tool-steps.ts';

const passagesQuoted = 3;

export async function localAnswer(
  scope: RunScope,
  input: RunJobInput,
  recorded: readonly RunStep[],
): Promise<LoopResult> {
  const step = await retrievalStep(scope, input, recorded, passagesQuoted);
  const sources = new Sources();
  const passages = sources.add(knowledgeSearchResultSchema.parse(step.output));
  const intro =
    'This is the local runtime: no language model is configured for agents here, so I cannot reason or use tools; ' +
    'I can only quote the knowledge base.';
  const answer = passages.length
    ? [
        `${intro} The passages that best match your question:`,
        ...passages.map((passage) => `[${passage.marker}] ${passage.document}: ${passage.content.trim()}`),
      ].join('\n\n')
    : `${intro} Nothing in it matches your question.`;
  return { answer, sources, stopped: null, steps: [step], cost: 0, tokens: 0, model: null };
}
