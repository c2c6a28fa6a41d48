// A refusal of a resource read or a prompt as MCP answers one: a JSON-RPC
// error, not a tool's result. Its code says what kind of refusal it is
// (-32602 Invalid params for what the request named wrongly, not found
// included, as the TypeScript SDK and SEP-2164 have it; -32600 for what the
// caller may not do; -32603 for our own failure) and its data is the problem
// document the REST endpoint would have answered, so a client learns the same
// status and detail either way.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Problem } from '../../core/errors.ts';
import { fromZodError, toProblem } from '../middleware/problems.ts';
import type { CallContext } from './tool.ts';

/** Statuses that mean the request named something wrongly: bad arguments, a bad cursor, nothing there. */
const invalidParams = new Set([400, 404, 422]);

export function rpcError(error: unknown, context: CallContext, method: string): McpError {
  if (error instanceof McpError) return error;
  let problem = toProblem(error);
  if (!problem && context.signal.aborted) {
    problem = new Problem(504, 'The request did not finish within its timeout.');
  }
  if (!problem || problem.status >= 500) context.log.error({ err: error, method }, 'MCP request failed');
  problem ??= new Problem(500, 'An unexpected error occurred. It has been logged with the request id.');
  const code =
    problem.status >= 500
      ? ErrorCode.InternalError
      : invalidParams.has(problem.status)
        ? ErrorCode.InvalidParams
        : ErrorCode.InvalidRequest;
  return new McpError(code, problem.message, { ...problem.toBody('/mcp'), request_id: context.requestId });
}

/** Runs a request's work, answering any failure as rpcError says. */
export async function answering<T>(context: CallContext, method: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw rpcError(error, context, method);
  }
}

/**
 * A request's schema that takes its params as they come, for the handler to
 * check them with `paramsOf`: params the SDK's own check refuses are answered
 * as an internal error (-32603), where they are the client's invalid params.
 */
export const anyParams = <S extends z.ZodObject>(schema: S) => schema.extend({ params: z.unknown().optional() });

/** The params by the protocol's schema; a 422 naming each field otherwise (invalid params, once answered). */
export function paramsOf<T extends z.ZodType>(schema: T, params: unknown): z.output<T> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw fromZodError(parsed.error, 'params');
  return parsed.data;
}
