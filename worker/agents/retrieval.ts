// A run's search of its agent's knowledge base with the run's input, as the
// member who asked (a site they do not reach is not searched), recorded as a
// step — the local runtime's one step, and the first of a run whose agent
// searches before its model is asked (knowledge_first). A run that resumes
// finds the step recorded and does not search again.
import { recordStep, type NewStep, type RunStep } from '../../core/agents/run-steps.ts';
import type { RunJobInput } from '../../core/agents/runs.ts';
import { searchKnowledge } from '../../core/knowledge/search.ts';
import type { RunScope } from './tool-steps.ts';

export async function retrievalStep(
  scope: RunScope,
  input: RunJobInput,
  recorded: readonly RunStep[],
  limit: number,
): Promise<NewStep> {
  const done = recorded.find((step) => step.kind === 'retrieval');
  if (done) return done;
  const { context, actor, agent } = scope;
  await context.progress(0.05, 'searching the knowledge base');
  const query = input.input.slice(0, 1000);
  const started = Date.now();
  const found = await searchKnowledge(
    { db: context.db, config: context.config, signal: context.signal },
    actor,
    agent.id,
    {
      query,
      limit,
    },
  );
  const step: NewStep = {
    step: recorded.length + 1,
    kind: 'retrieval',
    name: 'knowledge_search',
    input: { query, limit },
    output: found,
    status: 'ok',
    input_tokens: 0,
    output_tokens: 0,
    duration_ms: Date.now() - started,
    cost: 0,
  };
  await recordStep(context.db, context.job, step);
  return step;
}
