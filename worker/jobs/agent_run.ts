// An agent run (core/agents/runs.ts): the agent's model and tools in a loop
// (worker/agents/loop.ts), or the local runtime when it has no model
// (worker/agents/local-runtime.ts). It acts as the member who started it,
// as they are now; its answer and citations are written into the
// conversation in the settling transaction, so a run answers exactly once,
// and it is charged the sum of its steps.
import { agentForRun, instructionsWith, type KeptActor } from '../../core/agents/agents.ts';
import { citationsOf } from '../../core/agents/citations.ts';
import { addMessage, historyBefore } from '../../core/agents/conversations.ts';
import { runSteps, stepsCost } from '../../core/agents/run-steps.ts';
import { runActorNow, runJobInput } from '../../core/agents/runs.ts';
import { Problem } from '../../core/errors.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { resolveSite } from '../../core/tenancy/site-access.ts';
import { localAnswer } from '../agents/local-runtime.ts';
import { runLoop } from '../agents/loop.ts';
import { defineJob } from '../job.ts';
import { citationsPlacedEvent, startedEvent } from '../../core/agents/run-events.ts';
import { RunPublisher } from '../agents/run-events.ts';

const stoppedBecause = {
  max_steps: 'it made as many model calls as its max_steps allows',
  max_tokens: 'its model calls used the tokens its max_tokens allows',
  max_credits: 'its steps cost the credits its max_credits allows',
  agent_budget: 'its steps spent what was left of the agent’s monthly budget in this tenant',
  tenant_budget: 'its steps spent what was left of the tenant’s monthly budget for agent runs',
};

export default defineJob({
  input: runJobInput,
  // A run that fails after its model answered is still charged the calls the vendor billed.
  spent: ({ db, job }) => stepsCost(db, job.id),
  async run(input, context) {
    const { db, job, services } = context;
    if (!services) throw permanent('not_configured', 'This worker was started without the services agent runs need.');
    const kept: KeptActor =
      input.actor.kind === 'user'
        ? { kind: 'user', userId: input.actor.user_id }
        : { kind: 'service', tenantId: job.tenant_id };
    // Read at once: each is a round trip before the first step.
    const [actor, site, agent, history, recorded] = await Promise.all([
      runActorNow(db, input.actor, job.tenant_id),
      resolveSite(db, job.site_id),
      agentForRun(db, kept, input.agent_id).catch((error: unknown) => {
        if (error instanceof Problem) return error;
        throw error;
      }),
      historyBefore(db, input.conversation_id, job.id),
      runSteps(db, job.id),
    ]);
    if (!actor)
      throw permanent(
        'actor_unavailable',
        'Whoever started the run is no longer active, or the API key it was started with was revoked or expired.',
      );
    if (agent instanceof Problem) throw permanent('agent_unavailable', agent.message);
    if (!agent) throw permanent('agent_unavailable', 'No such agent.');
    if (!agent.tenant_ids.includes(job.tenant_id))
      throw permanent('agent_unavailable', 'The agent is no longer assigned to this tenant.');
    if (!site) throw permanent('site_missing', 'The site was deleted before the run.');
    // Its events (worker/agents/run-events.ts): its start here, its text and tool calls in the loop, its end from the job.
    const events = new RunPublisher(context);
    const scope = { context, services, actor, agent, site, events };
    const run = { runId: job.id, agentId: agent.id, conversationId: input.conversation_id };
    if (job.started_at) events.publish(startedEvent(run, job.started_at));
    const models = (input.providers ?? []).filter((call) => call.vendor !== 'local');
    const result = models.length
      ? await runLoop(scope, input, models, {
          instructions: instructionsWith(agent.system_prompt, agent),
          history,
          recorded,
        })
      : await localAnswer(scope, input, recorded);

    const citations = await citationsOf(db, context.config.publicUrl, result.sources.citedBy(result.answer));
    events.publish(citationsPlacedEvent(result.steps.length, citations));
    const answer =
      result.answer ||
      (result.stopped ? `The run stopped before the agent answered: ${stoppedBecause[result.stopped]}.` : '');
    return {
      status: 'succeeded',
      units: result.tokens / 1000,
      credits: result.cost,
      call: result.model ?? undefined,
      output: {
        answer,
        citations,
        conversation_id: input.conversation_id,
        runtime: models.length ? 'model' : 'local',
        provider: result.model?.vendor ?? (models.length ? models[0]!.vendor : 'local'),
        model: result.model?.model ?? null,
        placeholder: models.length === 0,
        steps: result.steps.length,
        tokens: result.tokens,
        stopped: result.stopped,
        ...(result.stopped ? { stopped_because: stoppedBecause[result.stopped] } : {}),
      },
      commit: async (tx) => {
        await addMessage(tx, {
          tenantId: job.tenant_id,
          conversationId: input.conversation_id,
          jobId: job.id,
          role: 'assistant',
          content: answer,
          citations,
        });
      },
    };
  },
});
