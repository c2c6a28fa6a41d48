// Agent runs: a member asks an agent assigned to the site's tenant to do
// something; the run is a job of kind agent_run (worker/jobs/agent_run.ts),
// answered like every job. Its input is text, or a transfer prompt rendered
// with its variables; it belongs to a conversation (a new one unless one is
// named), whose messages the run reads first. What it may cost is reserved
// from its budget (max_tokens at the model's price, or nothing on the local
// runtime); it is charged the sum of its steps.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor, ApiKeyLimits } from '../actor.ts';
import type { Config } from '../config.ts';
import { Problem, notFound } from '../errors.ts';
import { findActiveAccount } from '../identity/authenticate.ts';
import { exactlyOneOf } from '../field-rules.ts';
import { jobSchema, type Job } from '../jobs/model.ts';
import { getJob } from '../jobs/queries.ts';
import { submitJob } from '../jobs/submit.ts';
import { inTestMode } from '../jobs/test-mode.ts';
import { planField, planFor, type PlannedCall } from '../providers/plan.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { renderTransferPrompt } from '../transferprompts/render.ts';
import { usableAgent, type Agent } from './agents.ts';
import { budgetLeft, type CreditLimit as BudgetLimit } from './budgets.ts';
import { addMessage, findConversation, startConversation, type Conversation } from './conversations.ts';
import { runSteps, runStepSchema } from './run-steps.ts';

export const runKind = 'agent_run';

export const runRequest = z
  .strictObject({
    input: z.string().trim().min(1).max(20_000).optional().describe('What the agent is asked'),
    prompt_id: z.uuid().optional().describe('A transfer prompt whose text, with `variables`, is the input'),
    variables: z
      .record(z.string().max(64), z.string().max(20_000))
      .optional()
      .describe('The transfer prompt’s variables by name, each declared one given'),
    conversation_id: z.uuid().optional().describe('Goes on with this conversation; a new one is begun without it'),
    shared: z
      .boolean()
      .default(false)
      .describe('A new conversation is seen by every member who sees the agent; else by you alone'),
    max_steps: z.number().int().min(1).max(30).default(8).describe('The most model calls the run makes'),
    max_tokens: z
      .number()
      .int()
      .min(1000)
      .max(1_000_000)
      .default(20_000)
      .describe('The most tokens its model calls use in all: what is reserved, at the model’s price'),
    max_credits: z
      .number()
      .int()
      .min(1)
      .max(1_000_000_000)
      .optional()
      .describe('The most credits the run may cost: it reserves no more, and stops when its steps have cost that much'),
  })
  .superRefine((body, context) => {
    if ((body.input === undefined) === (body.prompt_id === undefined))
      context.addIssue({ code: 'custom', path: ['input'], message: 'send exactly one of input, prompt_id' });
    if (body.variables !== undefined && body.prompt_id === undefined)
      context.addIssue({ code: 'custom', path: ['variables'], message: 'variables go with prompt_id' });
  })
  .meta({ id: 'AgentRunRequest', ...exactlyOneOf('input', 'prompt_id') });

export type RunRequest = z.output<typeof runRequest>;

/** Who a run acts for, as kept on its job: its tools act with this access, never more. */
// The API key a run was started with, if any: the run acts within the key's
// limits as the request did, and ends with the key (revoked or expired).
const keptKey = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  scopes: z.array(z.string()),
  site_ids: z.array(z.uuid()).nullable(),
});

export const runActor = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user'), user_id: z.uuid(), api_key: keptKey.optional() }),
  z.object({
    kind: z.literal('service'),
    service_account_id: z.uuid(),
    scopes: z.array(z.string()),
    test_mode: z.boolean(),
    api_key: keptKey.optional(),
  }),
]);

/** The most credits a run may cost, below what its max_tokens would: its own max_credits, or a monthly budget's rest. */
export const creditLimit = z.object({
  credits: z.number().int(),
  by: z.enum(['run', 'agent_budget', 'tenant_budget']),
});

export const runJobInput = z.object({
  agent_id: z.uuid(),
  conversation_id: z.uuid(),
  input: z.string(),
  max_steps: z.number().int(),
  max_tokens: z.number().int(),
  credit_limit: creditLimit.optional(),
  actor: runActor,
  providers: planField,
});

export type RunJobInput = z.output<typeof runJobInput>;
type CreditLimit = z.infer<typeof creditLimit> | BudgetLimit;

/** The agent, usable by the caller and assigned to the site's tenant; 404 otherwise, 403 if disabled. */
export async function agentForSite(db: CommonQueryMethods, { actor, site }: SiteAccess, agentId: string) {
  const agent = await usableAgent(db, actor, agentId);
  if (!agent.tenant_ids.includes(site.tenant_id)) throw notFound('No such agent.');
  return agent;
}

const keyOf = ({ apiKey }: Actor) =>
  apiKey
    ? { api_key: { id: apiKey.id, tenant_id: apiKey.tenantId, scopes: apiKey.scopes, site_ids: apiKey.siteIds } }
    : {};

const actorOf = (actor: Actor): z.infer<typeof runActor> =>
  actor.kind === 'user'
    ? { kind: 'user', user_id: actor.userId, ...keyOf(actor) }
    : {
        kind: 'service',
        service_account_id: actor.serviceAccountId,
        scopes: actor.scopes,
        test_mode: actor.testMode ?? false,
        ...keyOf(actor),
      };

const limitsOf = (key: z.infer<typeof keptKey> | undefined): ApiKeyLimits | undefined =>
  key && { id: key.id, tenantId: key.tenant_id, scopes: key.scopes, siteIds: key.site_ids };

/** Whether the run's key (if it was started with one) is still neither revoked nor expired. */
const keyLive = (key: z.infer<typeof keptKey> | undefined) =>
  key
    ? sql.fragment`exists (select 1 from api_keys k where k.id = ${key.id} and (k.expires_at is null or k.expires_at > now()))`
    : sql.fragment`true`;

/**
 * The models the run may call: the agent's own model where the operator
 * allows it, else the text chain's defaults. The local runtime (no model) is
 * free: it quotes the knowledge base.
 */
function runPlan(config: Config, agent: Agent): PlannedCall[] {
  const allowed = config.providers.chains.text.some(
    (vendor) => agent.model !== null && config.providers.models[vendor]?.text?.includes(agent.model),
  );
  const plan = planFor(config.providers, 'text', allowed ? { model: agent.model! } : {});
  return plan.map((call) => (call.vendor === 'local' ? { ...call, unit: '1k_tokens', unit_price: 0 } : call));
}

/**
 * Starts a run: its conversation (found, or begun), the member's message,
 * and the job, in one transaction, so a refused submit (402) leaves no
 * message behind.
 */
export async function startRun(
  db: CommonQueryMethods,
  config: Config,
  access: SiteAccess,
  agentId: string,
  body: RunRequest,
  asked: Pick<Parameters<typeof submitJob>[3], 'webhook' | 'priority'>,
): Promise<{ job: Job; conversation: Conversation }> {
  const agent = await agentForSite(db, access, agentId);
  const input =
    body.input ??
    (await renderTransferPrompt(db, body.prompt_id!, body.variables ?? {}, {
      prompt: 'body.prompt_id',
      variables: 'body.variables',
    }));
  if (input.length > 100_000)
    throw new Problem(422, 'The rendered prompt is longer than 100,000 characters.', {
      errors: [{ path: 'body.variables', message: 'the rendered prompt is too long' }],
    });
  const plan = runPlan(config, agent);
  const free = plan.every((call) => call.vendor === 'local');
  return db.transaction(async (tx) => {
    // A free run (the local runtime, a test) spends no budget; any other is held to the tightest limit it has.
    const budget =
      free || (await inTestMode(tx, access.site.tenant_id, access.actor))
        ? null
        : await budgetLeft(tx, access.site.tenant_id, agent.id);
    const limits: CreditLimit[] = [
      ...(body.max_credits === undefined ? [] : [{ credits: body.max_credits, by: 'run' as const }]),
      ...(budget ? [budget] : []),
    ];
    const limit = limits.sort((a, b) => a.credits - b.credits)[0];
    const conversation = body.conversation_id
      ? await findConversation(tx, access, agent.id, body.conversation_id).catch((error: unknown) => {
          // A field of the body, not the path: the run's URL is right, the conversation named is not one of yours.
          if (!(error instanceof Problem && error.status === 404)) throw error;
          throw new Problem(422, 'No such conversation with this agent.', {
            errors: [{ path: 'body.conversation_id', message: 'no conversation of yours with this agent' }],
          });
        })
      : await startConversation(tx, access, agent.id, input, body.shared);
    const job = await submitJob(tx, config, access, {
      kind: runKind,
      input: {
        agent_id: agent.id,
        conversation_id: conversation.id,
        input,
        max_steps: body.max_steps,
        max_tokens: body.max_tokens,
        ...(limit && { credit_limit: limit }),
        actor: actorOf(access.actor),
        providers: plan,
      },
      estimatedUnits: body.max_tokens / 1000,
      plan: { calls: plan, estimate: { '1k_tokens': body.max_tokens / 1000 } },
      ...(limit && { maxCost: limit.credits }),
      webhook: asked.webhook,
      priority: asked.priority,
    });
    await addMessage(tx, {
      tenantId: access.site.tenant_id,
      conversationId: conversation.id,
      jobId: job.id,
      role: 'user',
      content: input,
    });
    return { job, conversation };
  });
}

export const runSchema = z
  .object({
    run: jobSchema.describe('The run’s job: status, progress, credits, and its answer in `output`'),
    agent_id: z.uuid(),
    conversation_id: z.uuid(),
    steps: z.array(runStepSchema),
  })
  .meta({ id: 'AgentRun' });

/** A run of the agent on the site, with its steps; 404 for another agent's or site's job, or one the caller may not see. */
export async function getRun(db: CommonQueryMethods, access: SiteAccess, agentId: string, runId: string) {
  const job = await getJob(db, access, runId);
  const input = runJobInput.safeParse(job.input);
  if (job.kind !== runKind || !input.success || input.data.agent_id !== agentId) throw notFound('No such run.');
  return {
    run: job,
    agent_id: agentId,
    conversation_id: input.data.conversation_id,
    steps: [...(await runSteps(db, job.id))],
  };
}

/**
 * Who the run acts as, now: the member as they are (a global admin no longer
 * one has that access no more), or the service account with the scopes its
 * token had at submit (and still has); within the limits of the API key it
 * was started with, if any. Null when either is gone or disabled, or the key
 * was revoked or expired.
 */
export async function runActorNow(db: CommonQueryMethods, kept: RunJobInput['actor'], tenantId: string) {
  const apiKey = limitsOf(kept.api_key);
  if (kept.kind === 'service') {
    const [account, live] = await Promise.all([
      findActiveAccount(db, kept.service_account_id),
      kept.api_key
        ? db.oneFirst(sql.type(z.object({ live: z.boolean() }))`select ${keyLive(kept.api_key)} as live`)
        : true,
    ]);
    if (!account || account.tenant_id !== tenantId || !live) return null;
    const actor: Actor = {
      kind: 'service',
      serviceAccountId: kept.service_account_id,
      tenantId,
      scopes: kept.scopes.filter((scope) => account.scopes.includes(scope)),
      testMode: kept.test_mode,
      ...(apiKey ? { apiKey } : {}),
    };
    return actor;
  }
  const user = await db.maybeOne(sql.type(z.object({ is_global_admin: z.boolean() }))`
    select is_global_admin from users where id = ${kept.user_id} and status = 'active' and ${keyLive(kept.api_key)}`);
  if (!user) return null;
  // No session: the run is not one, and nothing of a session's is asked of a run's actor.
  // A key never carries its holder's global administration (core/identity/api-keys.ts).
  const actor: Actor = apiKey
    ? { kind: 'user', userId: kept.user_id, sessionId: '', isGlobalAdmin: false, apiKey }
    : { kind: 'user', userId: kept.user_id, sessionId: '', isGlobalAdmin: user.is_global_admin };
  return actor;
}
