// The agent operations: the nine tools of the MCP server (api/mcp/), by name.
// An agent's `tools` names some of them; a session configured with the agent
// lists and calls only those. This list is the one both sides check against.
import { z } from 'zod';

export const agentTools = [
  'search_content',
  'get_page',
  'list_media',
  'create_post',
  'update_post',
  'generate_image',
  'text_to_speech',
  'get_job',
  'knowledge_search',
] as const;

export type AgentTool = (typeof agentTools)[number];

export const agentToolSchema = z.enum(agentTools).describe('An agent operation (a tool of the MCP server at /mcp)');

export const isAgentTool = (name: string): name is AgentTool => (agentTools as readonly string[]).includes(name);
