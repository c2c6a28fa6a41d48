// The local runtime, for a run with no language model to call (none in
// TEXT_PROVIDERS, or test mode): honest about what it is, it calls no tools
// and writes nothing; it searches the agent's knowledge base with the
// question, as the member who asked, and answers with the passages that match
// best, each cited. It costs nothing.
import { recordStep, runSteps, type NewStep } from '../../core/agents/run-steps.ts';
import type { RunJobInput } from '../../core/agents/runs.ts';
import { Sources } from '../../core/agents/citations.ts';
import { knowledgeSearchResultSchema, searchKnowledge } from '../../core/knowledge/search.ts';
import type { LoopResult } from './loop.ts';
import type { RunScope } from './tool-steps.ts';

const passagesQuoted = 3;

export async function localAnswer(scope: RunScope, input: RunJobInput): Promise<LoopResult> {
  const { context, actor, agent } = scope;
  const { db, job } = context;
  // A run that resumes has searched already: the same passages, not a second search.
  const recorded = (await runSteps(db, job.id)).find((step) => step.kind === 'retrieval');
  let step: NewStep | undefined = recorded;
  if (!step) {
    await context.progress(0.3, 'searching the knowledge base');
    const started = Date.now();
    const found = await searchKnowledge({ db, config: context.config, signal: context.signal }, actor, agent.id, {
      query: input.input.slice(0, 1000),
      limit: passagesQuoted,
    });
    step = {
      step: 1,
      kind: 'retrieval',
      name: 'knowledge_search',
      input: { query: input.input.slice(0, 1000), limit: passagesQuoted },
      output: found,
      status: 'ok',
      input_tokens: 0,
      output_tokens: 0,
      duration_ms: Date.now() - started,
      cost: 0,
    };
    await recordStep(db, job, step);
  }
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
