// Agents: global records that global administrators write and assign to
// tenants (./assignments.ts). Members of an assigned tenant — and that
// tenant's service accounts — see an agent; for anyone else it does not exist
// (404). Seeing is not writing: a member who sees an agent and tries to change
// it is told 403.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { activeMemberships, requireGlobalAdmin, tenantRole } from '../identity/access.ts';
import { containing } from '../like-pattern.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { currentSystemPrompt, generationPromptTypes } from '../system-prompts/for-jobs.ts';
import { promptTypeSchema } from '../system-prompts/prompts.ts';
import { agentToolSchema, type AgentTool } from './tools.ts';

export const agentStatuses = ['active', 'disabled'] as const;

export const agentSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    instructions: z
      .string()
      .describe('What the agent is told before anything else; also the MCP server’s instructions'),
    model: z.string().nullable().describe('The model the agent runs on; the runtime’s default when null'),
    temperature: z.number(),
    system_prompt_type: z.string().nullable().describe('The system prompt (by type) the agent starts from'),
    tools: z.array(agentToolSchema).describe('The MCP tools a session configured with this agent may list and call'),
    knowledge_first: z
      .boolean()
      .describe(
        'A run searches the knowledge base with its input before the first model call, and hands the passages to the model',
      ),
    avatar_media_id: z.uuid().nullable(),
    status: z.enum(agentStatuses).describe('A disabled agent is refused by the MCP server'),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Agent' });

export type Agent = z.infer<typeof agentSchema>;

export const agentColumns = sql.fragment`
  a.id, a.name, a.description, a.instructions, a.model, a.temperature, a.system_prompt_type, a.tools, a.knowledge_first,
  a.avatar_media_id, a.status, a.created_by, a.created_at, a.updated_at`;

// What an agent's writes take; the bounds are the table's.
const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const instructions = z.string().max(100_000);
const model = z.string().trim().min(1).max(200).nullable().describe('null: the runtime’s default model');
const temperature = z.number().min(0).max(2);
const systemPromptType = promptTypeSchema
  .nullable()
  .describe('A system prompt’s type (see /system-prompts/{prompt_type}); null for none');
const tools = z
  .array(agentToolSchema)
  .max(50)
  .transform((list) => [...new Set(list)])
  .describe('Tool names of the MCP server; repeats are dropped');
const status = z.enum(agentStatuses);

export const newAgentSchema = z.strictObject({
  name,
  description: description.default(''),
  instructions: instructions.default(''),
  model: model.default(null),
  temperature: temperature.default(0.7),
  system_prompt_type: systemPromptType.default(null),
  tools: tools.default([]),
  knowledge_first: z.boolean().default(false),
  status: status.default('active'),
});

export const agentChangesSchema = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    instructions: instructions.optional(),
    model: model.optional(),
    temperature: temperature.optional(),
    knowledge_first: z.boolean().optional(),
    system_prompt_type: systemPromptType.optional(),
    tools: tools.optional(),
    status: status.optional(),
    avatar_media_id: z.null().optional().describe('null removes the avatar; set one with POST …/avatar/{media_id}'),
  })
  .refine((body) => Object.keys(body).length > 0, 'Send at least one field.');

export type NewAgent = z.output<typeof newAgentSchema>;
export type AgentChanges = z.output<typeof agentChangesSchema>;

export const agentListQuery = pageQuery.extend({
  tenant_id: z.uuid().optional().describe('Only agents assigned to this tenant'),
  status: status.optional(),
  q: z.string().trim().min(1).max(200).optional().describe('Part of the name'),
});

export type AgentListQuery = z.output<typeof agentListQuery>;

/**
 * Whether the caller sees the agent `a`, as SQL: global admins see every
 * agent; users those assigned to a tenant they belong to (an active one);
 * service accounts those assigned to their tenant.
 */
export function visibleTo(actor: Actor) {
  if (actor.kind === 'service') return assignedTo(actor.tenantId);
  if (actor.isGlobalAdmin) return sql.fragment`true`;
  return assignedToTenantOf(actor.userId);
}

/** Agents assigned to the tenant. */
const assignedTo = (tenantId: string) =>
  sql.fragment`exists (select 1 from agent_tenants at where at.agent_id = a.id and at.tenant_id = ${tenantId})`;

/** Agents assigned to a tenant the member belongs to. */
const assignedToTenantOf = (userId: string) => sql.fragment`exists (
    select 1 from ${activeMemberships} join agent_tenants at on at.tenant_id = m.tenant_id
    where at.agent_id = a.id and m.user_id = ${userId})`;

const noSuchAgent = () => notFound('No such agent.');

/** The agent, when the caller sees it; 404 otherwise. */
export async function getAgent(db: CommonQueryMethods, actor: Actor, id: string): Promise<Agent> {
  const found = await db.maybeOne(
    sql.type(agentSchema)`select ${agentColumns} from agents a where a.id = ${id} and ${visibleTo(actor)}`,
  );
  if (!found) throw noSuchAgent();
  return found;
}

/**
 * The agent for a change by a global administrator, locked for the rest of
 * the transaction (unless only read: `lock` false). Anyone else: 403 when
 * they see it, 404 when they do not.
 */
export async function agentForChange(db: CommonQueryMethods, actor: Actor, id: string, lock = true): Promise<Agent> {
  if (actor.kind === 'user' && actor.isGlobalAdmin) {
    const found = await db.maybeOne(
      sql.type(
        agentSchema,
      )`select ${agentColumns} from agents a where a.id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`,
    );
    if (!found) throw noSuchAgent();
    return found;
  }
  await getAgent(db, actor, id);
  throw new Problem(403, 'Only global administrators may change agents.');
}

export async function listAgents(db: CommonQueryMethods, actor: Actor, query: AgentListQuery) {
  // Filtering by a tenant that is not the caller's would tell which agents another tenant uses.
  if (query.tenant_id && !(await tenantRole(db, actor, query.tenant_id))) throw notFound('No such tenant.');
  const where = sql.join(
    [
      visibleTo(actor),
      query.tenant_id
        ? sql.fragment`exists (select 1 from agent_tenants ft where ft.agent_id = a.id and ft.tenant_id = ${query.tenant_id})`
        : sql.fragment`true`,
      query.status ? sql.fragment`a.status = ${query.status}` : sql.fragment`true`,
      query.q ? sql.fragment`a.name ilike ${containing(query.q)}` : sql.fragment`true`,
    ],
    sql.fragment` and `,
  );
  const rows = await db.any(sql.type(agentSchema)`
    select ${agentColumns} from agents a where ${where} and ${after(query, 'a')}
    order by a.created_at, a.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from agents a where ${where}`));
}

export async function createAgent(db: CommonQueryMethods, actor: Actor, input: NewAgent): Promise<Agent> {
  requireGlobalAdmin(actor);
  return db.one(sql.type(agentSchema)`
    insert into agents as a (name, description, instructions, model, temperature, system_prompt_type, tools,
                             knowledge_first, status, created_by)
    values (${input.name}, ${input.description}, ${input.instructions}, ${input.model}, ${input.temperature},
            ${input.system_prompt_type}, ${sql.array(input.tools, 'text')}, ${input.knowledge_first}, ${input.status},
            ${actorUserId(actor)})
    returning ${agentColumns}`);
}

export async function updateAgent(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  changes: AgentChanges,
): Promise<Agent> {
  return db.transaction(async (tx) => {
    const agent = await agentForChange(tx, actor, id);
    const next = { ...agent, ...changes } as Agent & { tools: AgentTool[] };
    return tx.one(sql.type(agentSchema)`
      update agents as a set name = ${next.name}, description = ${next.description}, instructions = ${next.instructions},
        model = ${next.model}, temperature = ${next.temperature}, system_prompt_type = ${next.system_prompt_type},
        tools = ${sql.array(next.tools, 'text')}, knowledge_first = ${next.knowledge_first}, status = ${next.status},
        avatar_media_id = ${next.avatar_media_id}
      where a.id = ${id}
      returning ${agentColumns}`);
  });
}

/** Deletes the agent; its tenant assignments (and knowledge base) go with it. */
export async function deleteAgent(db: CommonQueryMethods, actor: Actor, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    await agentForChange(tx, actor, id);
    await tx.query(sql.typeAlias('void')`delete from agents where id = ${id}`);
  });
}

/**
 * What a session with the agent is told to do: the system prompt of the
 * agent's type (`agent` when it names none), when one is stored, then the
 * agent's own instructions.
 */
export async function agentInstructions(db: CommonQueryMethods, agent: Agent): Promise<string> {
  const prompt = await currentSystemPrompt(db, agent.system_prompt_type ?? generationPromptTypes.agent);
  return instructionsWith(prompt?.content ?? null, agent);
}

/** The agent's instructions after its type's system prompt (`prompt`, null when none is stored). */
export const instructionsWith = (prompt: string | null, agent: Pick<Agent, 'instructions'>) =>
  [prompt, agent.instructions].filter((part) => part?.trim()).join('\n\n');

/**
 * Who an agent run acts for, as its job keeps them: a member by id (whether a
 * global administrator is read now), or a service account of the run's tenant.
 */
export type KeptActor = { kind: 'user'; userId: string } | { kind: 'service'; tenantId: string };

const agentForRunSchema = agentSchema.extend({
  tenant_ids: z.array(z.uuid()),
  /** The current system prompt of the agent's type (`agent` when it names none), null when none is stored. */
  system_prompt: z.string().nullable(),
});

/**
 * The agent as usableAgent answers it, with its type's system prompt, for
 * whom a run acts for as its job keeps them: one statement that needs nothing
 * read before it, so that a run reads its agent beside its member, not after.
 * Null when they do not see it; 403 when it is disabled.
 */
export async function agentForRun(
  db: CommonQueryMethods,
  kept: KeptActor,
  id: string,
): Promise<z.infer<typeof agentForRunSchema> | null> {
  // visibleTo's rules, with whether the member is a global administrator read in the same statement.
  const visible =
    kept.kind === 'service'
      ? assignedTo(kept.tenantId)
      : sql.fragment`(exists (select 1 from users u where u.id = ${kept.userId} and u.status = 'active' and u.is_global_admin)
          or ${assignedToTenantOf(kept.userId)})`;
  const found = await db.maybeOne(sql.type(agentForRunSchema)`
    select ${agentColumns},
           array(select at.tenant_id from agent_tenants at where at.agent_id = a.id) as tenant_ids,
           (select v.content from system_prompts p
            join system_prompt_versions v on v.prompt_id = p.id and v.version = p.version
            where p.prompt_type = coalesce(a.system_prompt_type, ${generationPromptTypes.agent})) as system_prompt
    from agents a where a.id = ${id} and ${visible}`);
  if (found && found.status !== 'active') throw new Problem(403, `The agent ${found.name} is disabled.`);
  return found;
}

/** An agent as a session of the MCP server runs it: one the caller sees (404), not disabled (403), with its tenants. */
export async function usableAgent(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
): Promise<Agent & { tenant_ids: string[] }> {
  // Both at once: an agent run reads them before its first step.
  const [agent, tenantIds] = await Promise.all([
    getAgent(db, actor, id),
    db.anyFirst(
      sql.type(z.object({ tenant_id: z.uuid() }))`select tenant_id from agent_tenants where agent_id = ${id}`,
    ),
  ]);
  if (agent.status !== 'active') throw new Problem(403, `The agent ${agent.name} is disabled.`);
  return { ...agent, tenant_ids: [...tenantIds] };
}
