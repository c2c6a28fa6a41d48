// What an MCP tool is: a thin call of the domain that mirrors one REST
// endpoint. It takes that route's access (who may call it) and its zod
// schemas (what it takes), so a tool can neither let in someone the endpoint
// would refuse nor accept what the endpoint would reject. Its arguments are
// the route's path parameters, query and body side by side in one object,
// plus `wait` for tools that make or read a job, and for tools that make one
// `webhook` and `webhook_events`, as their endpoints take them
// (../jobs/webhook-fields.ts).
import { z } from 'zod';
import type { Actor } from '../../core/actor.ts';
import type { Agent } from '../../core/agents/agents.ts';
import type { AgentTool } from '../../core/agents/tools.ts';
import { Problem } from '../../core/errors.ts';
import type { Job } from '../../core/jobs/model.ts';
import type { SiteAccess } from '../../core/tenancy/site-access.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { webhookFields, type WebhookFields } from '../../core/webhooks/request.ts';
import { jobResponses } from '../jobs/answer.ts';
import { fromZodError } from '../middleware/problems.ts';
import type { ContextFor, RouteDefinition } from '../route.ts';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The request a call arrived on: the caller, its database and deadline. */
export type CallContext = ContextFor<'signed-in'>;

/** What a tool's run gets beside its arguments. */
export type ToolCall = {
  context: CallContext;
  actor: Actor;
  /** The session's agent, read again for this call; null in a session without one. */
  agent: Agent | null;
  /** The site of `site_identifier`, admitted as the mirrored route admits it. */
  site: Site | undefined;
  access: SiteAccess | undefined;
  /**
   * Holds on to a job until it ends or `seconds` pass (capped by the request's deadline), telling the client its
   * progress; answers it as the job endpoints do, with its media's file URLs (./call.ts).
   */
  waitFor(job: Job, seconds: number | undefined): Promise<Job>;
};

export type ToolInput<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> = {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  wait: number | undefined;
  /** The webhook fields, for a tool whose endpoint makes a job (empty otherwise). */
  webhook: WebhookFields;
};

export type ToolDefinition<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
> = {
  name: AgentTool;
  title: string;
  description: string;
  /** The REST endpoint it mirrors: its access is the tool's, and its schemas must be the ones below. */
  route: RouteDefinition;
  /** The route's own schemas, or some of them narrowed, when `narrowed` says why (create_post writes drafts only). */
  params?: P;
  query?: Q;
  body?: B;
  narrowed?: string;
  /** Accepts `wait` (seconds), like `Prefer: wait=N` on the endpoint. */
  waits?: boolean;
  /** Read-only tools say so to clients (MCP's readOnlyHint). */
  readOnly?: boolean;
  run(input: ToolInput<P, Q, B>, call: ToolCall): Promise<unknown>;
};

/** The most a call may wait: POST /mcp's timeout (60 s) less the time to answer. */
export const maxWaitSeconds = 55;

const waitSchema = z
  .number()
  .int()
  .min(0)
  .max(maxWaitSeconds)
  .optional()
  .describe(`Seconds to wait for the job to end before answering (like Prefer: wait=N), at most ${maxWaitSeconds}`);

const shapeOf = (schema: z.ZodType | undefined): z.ZodRawShape => (schema instanceof z.ZodObject ? schema.shape : {});

/**
 * A tool, checked as it is defined: its schemas are the mirrored route's own
 * (or narrowed ones, saying why), and no argument name is claimed twice.
 */
export function defineTool<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  tool: ToolDefinition<P, Q, B>,
): ToolDefinition {
  const request = tool.route.request ?? {};
  const own = tool.params === request.params && tool.query === request.query && tool.body === request.body;
  if (!own && !tool.narrowed) {
    throw new Error(`Tool ${tool.name} must take the schemas of ${tool.route.key}, or say why it narrows them`);
  }
  const names = [tool.params, tool.query, tool.body].flatMap((schema) => Object.keys(shapeOf(schema)));
  if (tool.waits) names.push('wait');
  if (makesJobs(tool)) names.push(...Object.keys(webhookFields.shape));
  if (new Set(names).size !== names.length) throw new Error(`Tool ${tool.name} has an argument name twice`);
  return tool;
}

/** Whether the tool's endpoint makes a job, and so takes the webhook fields. */
const makesJobs = (tool: Pick<ToolDefinition, 'route'>) => tool.route.responses[202] === jobResponses[202];

// Built once per tool: zod compiles an object schema on its first parse, so a
// schema made again for every call would pay that compile on every call.
const argumentsSchemas = new WeakMap<ToolDefinition, z.ZodObject>();

/** All of a tool's arguments as one object schema: what tools/list shows and what is checked first. */
export function argumentsSchema(tool: ToolDefinition): z.ZodObject {
  let schema = argumentsSchemas.get(tool);
  if (!schema) argumentsSchemas.set(tool, (schema = wholeArguments(tool)));
  return schema;
}

function wholeArguments(tool: ToolDefinition): z.ZodObject {
  return z.strictObject({
    ...shapeOf(tool.params),
    ...shapeOf(tool.query),
    ...shapeOf(tool.body),
    ...(tool.waits ? { wait: waitSchema } : {}),
    ...(makesJobs(tool) ? webhookFields.shape : {}),
  });
}

/** A problem as a tool answers it: its paths name the arguments as the client sent them, not parts of an HTTP request. */
export const asArguments = (problem: Problem) =>
  new Problem(problem.status, problem.message, {
    type: problem.type,
    title: problem.title,
    ...(problem.errors
      ? {
          errors: problem.errors.map((error) => ({
            ...error,
            path: error.path.replace(/^(?:params|query|body)(?=\.|$)/, 'arguments'),
          })),
        }
      : {}),
    extensions: problem.extensions,
  });

/**
 * The arguments, checked as the endpoint checks its request: first as one
 * object (unknown names, each field), then each part by the route's own
 * schema, so its refinements and defaults apply exactly as over HTTP.
 */
export function parseArguments(
  tool: ToolDefinition,
  args: Record<string, unknown>,
): ToolInput<AnyObject, AnyObject, z.ZodType> {
  const whole = argumentsSchema(tool).safeParse(args);
  if (!whole.success) throw fromZodError(whole.error, 'arguments');
  const { webhook, webhook_events } = whole.data as WebhookFields;
  const part = (schema: z.ZodType | undefined, location: string) => {
    if (!schema) return {};
    const keys = Object.keys(shapeOf(schema));
    const picked = Object.fromEntries(Object.entries(args).filter(([key]) => keys.includes(key)));
    const parsed = schema.safeParse(picked);
    if (!parsed.success) throw fromZodError(parsed.error, location);
    return parsed.data;
  };
  return {
    params: part(tool.params, 'params') as z.output<AnyObject>,
    query: part(tool.query, 'query') as z.output<AnyObject>,
    body: part(tool.body, 'body'),
    wait: (whole.data as { wait?: number }).wait,
    webhook: { webhook, webhook_events },
  };
}

/**
 * A schema as the JSON Schema MCP lists (draft-07, as the SDK's own server
 * and client use). A root that refers to a named definition is inlined:
 * MCP wants `type: object` at the root.
 */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown> & {
    $ref?: string;
    definitions?: Record<string, Record<string, unknown>>;
  };
  const { $ref, ...rest } = json;
  const named = $ref?.match(/^#\/definitions\/(.+)$/)?.[1];
  return named && rest.definitions?.[named] ? { ...rest, ...rest.definitions[named] } : json;
}
