// The MCP server's resources: a site's posts, pages and media items
// (./resource-kinds.ts), read with the caller's own access. resources/read
// admits the caller to the URI's site as the item's REST endpoint admits
// them and reads it with that endpoint's domain function: what GET would
// answer 404 or 403 is refused here too, as a JSON-RPC error carrying the
// same problem (./rpc-error.ts). A session's agent reads only the sites of
// the tenants it is assigned to, as its tools do. Answers are JSON text;
// a media item's is its metadata and a link to the file, never the file.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  PaginatedRequestParamsSchema,
  ReadResourceRequestParamsSchema,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { notFound } from '../../core/errors.ts';
import { signingKey } from '../../core/media/urls.ts';
import { actingFor } from '../../db/tenant-scope.ts';
import { admit, tenantOf } from '../handle.ts';
import { fromZodError } from '../middleware/problems.ts';
import { listResources, type SessionAgent } from './resource-list.ts';
import { parseUri, resourceKinds, templateOf } from './resource-kinds.ts';
import { answering, anyParams, paramsOf } from './rpc-error.ts';
import type { CallContext } from './tool.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How a handler learns its request's caller and the session's agent as it is now (./server.ts). */
export type SessionOf = {
  contextOf(extra: Extra): CallContext;
  agentNow(context: CallContext): Promise<SessionAgent>;
};

/** Where this API is reached, for links in answers: PUBLIC_URL, or the host the request came to. */
const baseOf = (context: CallContext, extra: Extra) =>
  context.services.config.publicUrl ?? extra.requestInfo?.url?.origin ?? '';

async function read(context: CallContext, agent: SessionAgent, uri: string, extra: Extra) {
  const named = parseUri(uri);
  if (!named) {
    throw notFound(`No resource ${uri}: this server’s are cms://{site}/posts|pages|media/{id}.`);
  }
  const { kind, params } = named;
  // The URI's parts, checked by the endpoint's own schema for its path (a post id is a UUID...).
  const checked = kind.route.request!.params!.safeParse(params);
  if (!checked.success) throw fromZodError(checked.error, 'uri');
  const { site, access } = await admit(
    context.services.accessCache,
    context.db,
    kind.route.access,
    context.actor,
    checked.data,
  );
  if (agent && site && !agent.tenant_ids.includes(site.tenant_id)) {
    throw notFound(`No such site for the agent ${agent.name}.`);
  }
  const id = (checked.data as Record<string, string>)[kind.idName]!;
  const links = { base: baseOf(context, extra), secret: signingKey(context.services.config) };
  const reading = () => kind.read(context.db, access!, id, links);
  // It reads in its site's tenant, as its REST route does.
  const tenant = tenantOf(site, context.actor);
  const item = await (tenant ? actingFor(tenant, reading) : reading());
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(item) }] };
}

export function serveResources(server: Server, { contextOf, agentNow }: SessionOf): void {
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: resourceKinds.map(templateOf),
  }));

  server.setRequestHandler(anyParams(ListResourcesRequestSchema), (request, extra) => {
    const context = contextOf(extra);
    return answering(context, 'resources/list', async () => {
      const params = paramsOf(PaginatedRequestParamsSchema.optional(), request.params);
      return listResources(context, await agentNow(context), params?.cursor);
    });
  });

  server.setRequestHandler(anyParams(ReadResourceRequestSchema), (request, extra) => {
    const context = contextOf(extra);
    return answering(context, 'resources/read', async () => {
      const params = paramsOf(ReadResourceRequestParamsSchema, request.params);
      return read(context, await agentNow(context), params.uri, extra);
    });
  });
}
