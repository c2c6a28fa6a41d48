// A client's tools/call, recorded as a step beside the steps of agent runs
// (core/agents/run-steps.ts, recordMcpStep), so that a call made over MCP
// shows where a run's does. As a run's tool call (worker/agents/tool-steps.ts),
// a tool that writes runs in a transaction that also records its step: the
// write and its record commit together or not at all. A read-only tool is
// recorded once it has answered, outside any transaction: its reads may be
// slow (an embedding call, a wait for a job) and nothing of theirs must
// commit with the record. A refusal (a problem below 500) is recorded as
// refused, anything else as failed, with the problem the client was told.
import type { Actor } from '../../core/actor.ts';
import { recordMcpStep, type McpStep } from '../../core/agents/run-steps.ts';
import type { ProblemBody } from '../../core/errors.ts';
import type { Job } from '../../core/jobs/model.ts';
import type { RequestDb } from '../../db/cancellable.ts';
import type { DatabaseTransactionConnection } from '../../db/pool.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { callAgentTool, jobAnswer, type AgentToolCall } from './call.ts';
import type { CallContext, ToolDefinition } from './tool.ts';

/** The tools/call being recorded: the session it was made in and the id of its JSON-RPC request. */
export type McpCall = { sessionId: string; requestId: string | number };

/** The request's context, its statements on the transaction `tx`. */
function onTransaction(context: CallContext, tx: DatabaseTransactionConnection): CallContext {
  const db = tx as unknown as RequestDb;
  return {
    services: context.services,
    requestId: context.requestId,
    log: context.log,
    signal: context.signal,
    deadline: context.deadline,
    db,
    deps: { ...context.deps, db },
    ip: context.ip,
    baseUrl: context.baseUrl,
    authenticate: context.authenticate,
    limitJobs: (tenantId) => context.limitJobs(tenantId),
    webhook: context.webhook ?? null,
    actor: context.actor,
    claims: context.claims,
  };
}

/** The tenant a call is recorded under until a site is admitted: a service account's own. */
const tenantOfCaller = (actor: Actor) => (actor.kind === 'service' ? actor.tenantId : null);

/** A tools/call of `tool` with `args`, recorded as a step of the MCP session whatever its end. */
export function mcpToolStep(context: CallContext, { sessionId, requestId }: McpCall, name: string, args: object) {
  const started = performance.now();
  let tenantId = tenantOfCaller(context.actor);
  let admittedTo: Site | undefined;
  const step = (status: McpStep['status'], output: unknown): McpStep => ({
    sessionId,
    tenantId,
    actor: context.actor,
    name,
    input: args as Record<string, unknown>,
    output,
    callId: String(requestId),
    status,
    durationMs: performance.now() - started,
  });
  const admitted: AgentToolCall['admitted'] = (site) => {
    admittedTo = site;
    if (site) tenantId = site.tenant_id;
  };

  return {
    /** Calls the tool and records its answer; a refusal is thrown, for `refused` to record. */
    async call(tool: ToolDefinition, call: Omit<AgentToolCall, 'admitted'>): Promise<unknown> {
      const { context } = call;
      if (tool.readOnly) {
        const answer = plain(await callAgentTool(tool, args as Record<string, unknown>, { ...call, admitted }));
        await recordMcpStep(context.db, step('ok', answer));
        return answer;
      }
      let held: { job: Job; seconds: number | undefined } | undefined;
      const answer = await context.db.transaction(async (tx) => {
        const done = plain(
          await callAgentTool(tool, args as Record<string, unknown>, {
            ...call,
            context: onTransaction(context, tx),
            // No worker sees a job before the commit: the tool answers the job as submitted (and that
            // is what is recorded), and the client's wait for it begins once it is committed.
            waitFor: (job, seconds) => {
              held = { job, seconds };
              return Promise.resolve(job);
            },
            admitted,
          }),
        );
        await recordMcpStep(tx, step('ok', done));
        return done;
      });
      // A job tool answers the job it waited for (./tools.ts): the wait, now that it can end, answered
      // as the tool answers a job (with its file URLs).
      return held ? jobAnswer(context, admittedTo)(await call.waitFor(held.job, held.seconds)) : answer;
    },

    /** Records the problem the client is told. Never throws: the client is answered either way. */
    async refused(problem: ProblemBody): Promise<void> {
      try {
        await recordMcpStep(context.db, step(problem.status < 500 ? 'refused' : 'failed', { problem }));
      } catch (error) {
        // Past the request's deadline its database starts nothing more, and a database that failed
        // the call may well fail its record too.
        context.log.warn({ err: error, tool: name }, 'MCP tool call not recorded');
      }
    },
  };
}

/** The answer as JSON carries it, as the client receives it. */
const plain = (answer: unknown): unknown => JSON.parse(JSON.stringify(answer ?? null)) as unknown;
