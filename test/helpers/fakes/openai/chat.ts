// POST /v1/chat/completions, as OpenAI's reference describes it
// (openai/openai-openapi f85dbe2, components.schemas.CreateChatCompletionRequest
// and CreateChatCompletionResponse, "SPEC" below), with the refusals users
// observed. Answers are scripted by the test (a message, or tool calls of
// tools the request offered), whole or — asked with `stream: true` — as
// server-sent `chat.completion.chunk` events (chatStream, below).
import {
  invalidType,
  invalidValue,
  missingParameter,
  modelNotFound,
  outOfRange,
  type Refusal,
  refusal,
  unrecognizedArgument,
} from './errors.ts';

/** SPEC CreateChatCompletionRequest (with CreateModelResponseProperties): the keys it takes. */
const keys = [
  'metadata',
  'top_logprobs',
  'temperature',
  'top_p',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'messages',
  'model',
  'service_tier',
  'modalities',
  'verbosity',
  'reasoning_effort',
  'max_completion_tokens',
  'frequency_penalty',
  'presence_penalty',
  'web_search_options',
  'response_format',
  'audio',
  'store',
  'moderation',
  'stream',
  'stop',
  'logit_bias',
  'logprobs',
  'max_tokens',
  'n',
  'prediction',
  'seed',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'function_call',
  'functions',
];

/** Some of SPEC ModelIdsShared's current models. */
const models = [
  'gpt-5.5',
  'gpt-5.4',
  'gpt-5.4-mini',
  'gpt-5.4-nano',
  'gpt-5-mini',
  'gpt-4.1',
  'gpt-4.1-mini',
  'gpt-4.1-nano',
  'gpt-4o',
  'gpt-4o-mini',
  'o4-mini',
  'o3',
];
/** Reasoning models: temperature only 1, no max_tokens (observed, see below). */
const reasoning = (model: string) => /^(o\d|gpt-5)/.test(model);

const roles = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

type Message = { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown; name?: unknown };
type ToolCall = { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
type Tool = { type?: unknown; function?: { name?: unknown; parameters?: unknown } };

/** The first thing OpenAI would refuse in this request; else undefined. */
export function checkChat(body: Record<string, unknown>): Refusal | undefined {
  // Observed: "Unrecognized request argument supplied: reasoning_effort" (davidmigloz/langchain_dart#712).
  const unknown = Object.keys(body).find((key) => !keys.includes(key));
  if (unknown) return unrecognizedArgument(unknown);
  if (body.model === undefined) return missingParameter('model');
  if (typeof body.model !== 'string') return invalidType('model', 'a string', body.model);
  if (!models.includes(body.model)) return modelNotFound(body.model);
  if (body.messages === undefined) return missingParameter('messages');
  if (!Array.isArray(body.messages)) return invalidType('messages', 'an array', body.messages);
  // SPEC messages: minItems 1. Observed wording: find_string 70923856004.
  if (body.messages.length === 0) return refusal(400, "[] is too short - 'messages'");
  const messagesRefusal = checkMessages(body.messages as Message[]);
  if (messagesRefusal) return messagesRefusal;
  const toolsRefusal = checkTools(body);
  if (toolsRefusal) return toolsRefusal;
  if (body.temperature !== undefined) {
    if (typeof body.temperature !== 'number') return invalidType('temperature', 'a number', body.temperature);
    // SPEC temperature: 0 to 2. Observed: find_string 52045571239.
    if (body.temperature < 0 || body.temperature > 2)
      return outOfRange('temperature', body.temperature, { min: 0, max: 2 });
    // Observed for gpt-5 and o-series: find_string "Only the default (1)", johny-b/llmcomp#69.
    if (reasoning(body.model) && body.temperature !== 1)
      return refusal(
        400,
        `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
        { param: 'temperature', code: 'unsupported_value' },
      );
  }
  // Observed: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." (find_string 2374717039).
  if (body.max_tokens !== undefined && reasoning(body.model))
    return refusal(
      400,
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      { param: 'max_tokens', code: 'unsupported_parameter' },
    );
  for (const key of ['max_tokens', 'max_completion_tokens'] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isInteger(value)) return invalidType(key, 'an integer', value);
    if (value < 1) return outOfRange(key, value, { min: 1, integer: true });
  }
  if (body.n !== undefined && body.n !== 1) throw new Error('The OpenAI fake answers one choice (n: 1) only.');
  const streamRefusal = checkStream(body);
  if (streamRefusal) return streamRefusal;
  return checkResponseFormat(body.response_format, body.messages as Message[]);
}

/** SPEC CreateChatCompletionRequest.stream (a boolean, nullable) and ChatCompletionStreamOptions. */
function checkStream(body: Record<string, unknown>): Refusal | undefined {
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    return invalidType('stream', 'a boolean', body.stream);
  const options = body.stream_options;
  if (options === undefined || options === null) return undefined;
  // SPEC ChatCompletionStreamOptions: "Only set this when you set stream: true". The refusal was measured live
  // (find_string 59529675661; also a proxy's changelog, 6423622568); its param is a fake's (70324014939), not verified.
  if (body.stream !== true)
    return refusal(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", {
      param: 'stream_options',
    });
  if (typeof options !== 'object' || Array.isArray(options)) return invalidType('stream_options', 'an object', options);
  // SPEC ChatCompletionStreamOptions: include_usage and include_obfuscation, booleans.
  for (const key of ['include_usage', 'include_obfuscation']) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && typeof value !== 'boolean')
      return invalidType(`stream_options.${key}`, 'a boolean', value);
  }
  return undefined;
}

function checkMessages(messages: Message[]): Refusal | undefined {
  // Ids of the last assistant message's tool calls still waiting for their results.
  let waiting: string[] | undefined;
  for (const [index, message] of messages.entries()) {
    const where = `messages[${index}]`;
    if (typeof message !== 'object' || message === null) return invalidType(where, 'an object', message);
    if (!roles.includes(String(message.role))) return invalidValue(`${where}.role`, message.role, roles);
    if (waiting && message.role !== 'tool') return unanswered(waiting);
    if (message.role === 'tool') {
      // SPEC ChatCompletionRequestToolMessage: role, content and tool_call_id required.
      if (message.tool_call_id === undefined) return missingParameter(`${where}.tool_call_id`);
      if (typeof message.content !== 'string' && !Array.isArray(message.content))
        return invalidType(`${where}.content`, 'a string', message.content);
      // Observed (with OpenAI's spelling): find_string 22156875113.
      if (!waiting || !waiting.includes(String(message.tool_call_id)))
        return refusal(
          400,
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          { param: `messages.[${index}].role` },
        );
      waiting = waiting.filter((id) => id !== message.tool_call_id);
      if (waiting.length === 0) waiting = undefined;
      continue;
    }
    if (message.role === 'assistant') {
      const calls = message.tool_calls;
      // SPEC ChatCompletionRequestAssistantMessage: content "Required unless tool_calls or function_call is specified."
      if ((message.content === undefined || message.content === null) && !calls)
        return missingParameter(`${where}.content`);
      if (calls !== undefined) {
        if (!Array.isArray(calls)) return invalidType(`${where}.tool_calls`, 'an array', calls);
        const callsRefusal = checkToolCalls(calls as ToolCall[], where);
        if (callsRefusal) return callsRefusal;
        if (calls.length > 0) waiting = (calls as ToolCall[]).map((call) => String(call.id));
      }
      continue;
    }
    const contentRefusal = checkContent(message.content, `${where}.content`, message.role === 'user');
    if (contentRefusal) return contentRefusal;
  }
  return waiting ? unanswered(waiting) : undefined;
}

/** Observed: find_string 62927699213 and 25084160903; the param is not verified. */
const unanswered = (ids: string[]) =>
  refusal(
    400,
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    { param: 'messages' },
  );

/** SPEC ChatCompletionMessageToolCall: id, type "function", function { name, arguments (JSON text) }. */
function checkToolCalls(calls: ToolCall[], where: string): Refusal | undefined {
  for (const [index, call] of calls.entries()) {
    const at = `${where}.tool_calls[${index}]`;
    if (typeof call.id !== 'string') return missingParameter(`${at}.id`);
    if (call.type !== 'function') return invalidValue(`${at}.type`, call.type, ['function']);
    if (typeof call.function?.name !== 'string') return missingParameter(`${at}.function.name`);
    if (typeof call.function.arguments !== 'string')
      return invalidType(`${at}.function.arguments`, 'a string', call.function.arguments);
  }
  return undefined;
}

/**
 * SPEC ChatCompletionRequestUserMessage.content: text, or parts — text, and
 * (user messages) image_url with an http(s) or data URL
 * (ChatCompletionRequestMessageContentPartImage).
 */
function checkContent(content: unknown, where: string, pictures: boolean): Refusal | undefined {
  if (content === undefined) return missingParameter(where);
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content)) return invalidType(where, 'a string', content);
  for (const [index, part] of (
    content as { type?: unknown; text?: unknown; image_url?: { url?: unknown } }[]
  ).entries()) {
    const at = `${where}[${index}]`;
    const types = pictures ? ['text', 'image_url'] : ['text'];
    if (!types.includes(String(part?.type))) return invalidValue(`${at}.type`, part?.type, types);
    if (part.type === 'text' && typeof part.text !== 'string') return invalidType(`${at}.text`, 'a string', part.text);
    if (part.type === 'image_url') {
      const url = part.image_url?.url;
      if (typeof url !== 'string') return missingParameter(`${at}.image_url.url`);
      // OpenAI's vision guide: PNG, JPEG, WEBP and non-animated GIF; a data URL must say which. Wording not verified.
      if (!/^https?:\/\//.test(url) && !/^data:image\/(png|jpeg|webp|gif);base64,[A-Za-z0-9+/]+=*$/.test(url))
        return refusal(400, `Invalid '${at}.image_url.url': expected a URL or a base64 data URL of a picture.`, {
          param: `${at}.image_url.url`,
          code: 'invalid_value',
        });
    }
  }
  return undefined;
}

function checkTools(body: Record<string, unknown>): Refusal | undefined {
  const tools = body.tools as Tool[] | undefined;
  // Observed: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified." (find_string 55360965295); the same for parallel_tool_calls (70892336802).
  if (!tools || (Array.isArray(tools) && tools.length === 0)) {
    for (const key of ['tool_choice', 'parallel_tool_calls'])
      if (body[key] !== undefined)
        return refusal(400, `Invalid value for '${key}': '${key}' is only allowed when 'tools' are specified.`, {
          param: key,
        });
    return undefined;
  }
  if (!Array.isArray(tools)) return invalidType('tools', 'an array', tools);
  const names: string[] = [];
  for (const [index, tool] of tools.entries()) {
    const at = `tools[${index}]`;
    // SPEC ChatCompletionTool: type "function" and a function (custom tools are not emulated).
    if (tool?.type !== 'function') return invalidValue(`${at}.type`, tool?.type, ['function']);
    const name = tool.function?.name;
    if (typeof name !== 'string') return missingParameter(`${at}.function.name`);
    // SPEC FunctionObject.name: a-z, A-Z, 0-9, underscores and dashes, at most 64. Observed wording: find_string 69037417410.
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
      return refusal(
        400,
        `Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        { param: `${at}.function.name`, code: 'invalid_value' },
      );
    const parameters = tool.function?.parameters;
    if (
      parameters !== undefined &&
      (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
    )
      return invalidType(`${at}.function.parameters`, 'an object', parameters);
    names.push(name);
  }
  const choice = body.tool_choice;
  if (choice === undefined || ['none', 'auto', 'required'].includes(String(choice))) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc 7 reads `choice` as {}: it needs it
  const named = (choice as { type?: unknown; function?: { name?: unknown } } | null)?.function?.name;
  // SPEC ChatCompletionNamedToolChoice; naming a tool not offered is refused (wording not verified).
  if (typeof choice !== 'object' || typeof named !== 'string')
    return invalidValue('tool_choice', JSON.stringify(choice), ['none', 'auto', 'required']);
  if (!names.includes(named))
    return refusal(400, `Invalid value for 'tool_choice': function '${named}' is not among the tools.`, {
      param: 'tool_choice',
    });
  return undefined;
}

/** SPEC response_format: text, json_schema or json_object; JSON mode wants the word "json" in the messages. */
function checkResponseFormat(format: unknown, messages: Message[]): Refusal | undefined {
  if (format === undefined || format === null) return undefined;
  const type = (format as { type?: unknown }).type;
  if (!['text', 'json_schema', 'json_object'].includes(String(type)))
    return invalidValue('response_format.type', type, ['text', 'json_schema', 'json_object']);
  const mentionsJson = messages.some((message) => /json/i.test(JSON.stringify(message.content ?? '')));
  // Observed: find_string 56224418716 and 68358938895.
  if (type === 'json_object' && !mentionsJson)
    return refusal(
      400,
      "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
      {
        param: 'messages',
      },
    );
  return undefined;
}

export type ChatReply = {
  content?: string | null;
  /** Calls of tools the request offered; `arguments` as the model writes them (JSON text). */
  toolCalls?: { id?: string; name: string; arguments: string }[];
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** The tokens the answer reports (SPEC CompletionUsage), where a test needs a count of its own; else counted. */
  usage?: { promptTokens: number; completionTokens: number };
};

/** SPEC CreateChatCompletionResponse for this reply; usage counted at four characters a token. */
export function chatAnswer(body: Record<string, unknown>, reply: ChatReply) {
  const offered = ((body.tools as Tool[] | undefined) ?? []).map((tool) => tool.function?.name);
  for (const call of reply.toolCalls ?? [])
    if (!offered.includes(call.name))
      throw new Error(`The OpenAI fake was scripted to call ${call.name}, which the request did not offer.`);
  const json = (body.response_format as { type?: string } | undefined)?.type === 'json_object';
  const toolCalls = reply.toolCalls?.map((call, index) => ({
    id: call.id ?? `call_${Math.random().toString(36).slice(2, 10)}${index}`,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  const content =
    reply.content !== undefined ? reply.content : toolCalls ? null : json ? '{"answer":"fake"}' : 'Fake answer.';
  const promptTokens = reply.usage?.promptTokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
  const completionTokens =
    reply.usage?.completionTokens ?? Math.ceil(((content ?? '').length + JSON.stringify(toolCalls ?? []).length) / 4);
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 14)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          annotations: [],
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: reply.finishReason ?? (toolCalls ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
    service_tier: 'default',
    system_fingerprint: null,
  };
}

/**
 * The same answer streamed, as SPEC CreateChatCompletionStreamResponse has
 * it: server-sent events, each `data: <chunk>` (object `chat.completion.chunk`,
 * one id and `created` for all), then `data: [DONE]` (SPEC
 * CreateCompletionRequest.stream: "terminated by a data: [DONE] message").
 * - The first delta carries the role (SPEC's chunk example:
 *   `{"role":"assistant","content":""}`); for an answer of tool calls alone it is
 *   `content: null` with the first call opened, and `refusal: null` either way
 *   (a stream captured from OpenAI, find_string 52018286234).
 * - Text comes a word at a time, as tokens come.
 * - A tool call opens with its `index`, `id`, `type` and function `name` and
 *   empty `arguments`; its arguments follow in fragments, each with the index
 *   alone (SPEC ChatCompletionMessageToolCallChunk: only `index` required; the
 *   capture above, and SPEC's run step delta example for the same pieces).
 * - The last choice chunk has an empty delta and the `finish_reason` (SPEC's chunk example).
 * - With `stream_options.include_usage`, every chunk has `usage: null` and one
 *   more chunk before [DONE] has empty `choices` and the usage of the whole
 *   answer (SPEC ChatCompletionStreamOptions.include_usage).
 * - Each chunk has an `obfuscation` string unless `include_obfuscation` is false
 *   (SPEC CreateChatCompletionStreamResponse.obfuscation).
 */
export function chatStream(body: Record<string, unknown>, reply: ChatReply): string[] {
  const whole = chatAnswer(body, reply);
  const [choice] = whole.choices;
  const { content } = choice!.message;
  const calls = choice!.message.tool_calls ?? [];
  const options = (body.stream_options ?? {}) as { include_usage?: boolean; include_obfuscation?: boolean };
  const base = {
    id: whole.id,
    object: 'chat.completion.chunk',
    created: whole.created,
    model: whole.model,
    service_tier: whole.service_tier,
    system_fingerprint: whole.system_fingerprint,
  };
  const padding = () =>
    options.include_obfuscation === false ? {} : { obfuscation: Math.random().toString(36).slice(2, 10) };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(options.include_usage ? { usage: null } : {}),
    ...padding(),
  });
  const deltas: Record<string, unknown>[] = [];
  if (content !== null) {
    deltas.push({ role: 'assistant', content: '', refusal: null });
    for (const word of content.match(/\s*\S+|\s+$/g) ?? []) deltas.push({ content: word });
  }
  for (const [index, call] of calls.entries()) {
    const opening = { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } };
    deltas.push(
      index === 0 && content === null
        ? { role: 'assistant', content: null, tool_calls: [opening], refusal: null }
        : { tool_calls: [opening] },
    );
    for (const fragment of fragments(call.function.arguments, 6))
      deltas.push({ tool_calls: [{ index, function: { arguments: fragment } }] });
  }
  const chunks: object[] = [...deltas.map((delta) => chunk(delta)), chunk({}, choice!.finish_reason)];
  if (options.include_usage) chunks.push({ ...base, choices: [], usage: whole.usage, ...padding() });
  return [...chunks.map((each) => `data: ${JSON.stringify(each)}\n\n`), 'data: [DONE]\n\n'];
}

/** The text in pieces of `size` characters (whole code points). */
function fragments(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let at = 0; at < points.length; at += size) pieces.push(points.slice(at, at + size).join(''));
  return pieces;
}
