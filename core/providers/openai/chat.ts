// Chat from OpenAI's POST /chat/completions, with tools (openai/openai-openapi,
// components.schemas.CreateChatCompletionRequest and CreateChatCompletionResponse).
// Each message keeps its role; a user's pictures go as data URLs; an
// assistant's tool calls and the tool results that answer them (by
// `tool_call_id`) go back as OpenAI wrote them.
//
// What differs by model or server:
// - Reasoning models (o-series, gpt-5 and later) refuse any temperature but 1
//   (400 unsupported_value, observed): it is sent only to the others.
// - OpenAI's models take `max_completion_tokens` (`max_tokens` is deprecated,
//   and reasoning models refuse it); Ollama and LocalAI know only `max_tokens`,
//   so another model (a compatible server's: llama, qwen…) gets that. Told by
//   the model's name, not the server's, so that proxies and fakes of OpenAI work.
// - JSON mode (`response_format: json_object`) is refused unless a message says
//   "json" (observed); one is added when none does.
// - A compatible server may leave out a tool call's id (Ollama, per a client's
//   changelog) or finish a forced call with `stop` (OpenAI does too): ids are
//   made up where missing, and an answer with tool calls finishes `tool_calls`.
//
// A request that listens to the text as it comes (`onText`) is streamed
// (SPEC CreateChatCompletionRequest.stream, with `stream_options.include_usage`
// so the tokens are still counted) and put back together by ./chat-stream.ts
// into the same answer.
import type OpenAI from 'openai';
import { z } from 'zod';
import { permanent } from '../../jobs/errors.ts';
import type { ChatAnswer, ChatMessage, ChatModel, ChatRequest, ContentPart, VendorSettings } from '../capabilities.ts';
import { collectStream } from './chat-stream.ts';
import { connect } from './client.ts';
import { pictureType } from './picture-type.ts';

type Body = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

const takesTemperature = (model: string) => !/^(o\d|gpt-5)/.test(model);
/** OpenAI's own chat models (SPEC ModelIdsShared): gpt-*, chatgpt-*, o1, o3, o4-mini… */
const openAIModel = (model: string) => /^(gpt-|chatgpt-|o\d)/.test(model);

export function openaiChat(settings: VendorSettings): ChatModel {
  const openai = connect(settings);
  return {
    async chat(request, call) {
      const { onText } = request;
      const answer = await openai.send(call, async (client, options) => {
        if (!onText) return client.chat.completions.create(body(request, call.model), options);
        const chunks = await client.chat.completions.create(
          { ...body(request, call.model), stream: true, stream_options: { include_usage: true } },
          options,
        );
        const whole = await collectStream(chunks, onText, openai.name);
        // The SDK ends a stream it aborted quietly: the cancel (or the timeout) is the call's failure, not its end.
        options.signal.throwIfAborted();
        return whole;
      });
      return answerOf(answer, openai.name);
    },
  };
}

function body(request: ChatRequest, model: string): Body {
  const messages = request.messages.map(toOpenAI);
  if (request.json && !request.messages.some((message) => /json/i.test(textOf(message.content))))
    messages.unshift({ role: 'system', content: 'Answer with one JSON object.' });
  const tools = request.tools?.length ? request.tools : undefined;
  const choice = request.toolChoice;
  return {
    model,
    messages,
    ...(tools
      ? {
          tools: tools.map((tool) => ({
            type: 'function' as const,
            function: {
              name: tool.name,
              description: tool.description,
              parameters: tool.parameters as Record<string, unknown>,
            },
          })),
          // SPEC ChatCompletionToolChoiceOption; allowed only with tools (observed).
          ...(choice
            ? {
                tool_choice:
                  typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } },
              }
            : {}),
        }
      : {}),
    ...(request.temperature !== undefined && takesTemperature(model) ? { temperature: request.temperature } : {}),
    ...(request.json ? { response_format: { type: 'json_object' } } : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : openAIModel(model)
        ? { max_completion_tokens: request.maxOutputTokens }
        : { max_tokens: request.maxOutputTokens }),
  };
}

function toOpenAI(message: ChatMessage): Body['messages'][number] {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: typeof message.content === 'string' ? message.content : message.content.map(toOpenAIPart),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((toolCall) => ({
                id: toolCall.id,
                type: 'function' as const,
                function: { name: toolCall.name, arguments: toolCall.arguments },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

/** SPEC ChatCompletionRequestMessageContentPartImage: a picture goes as a data URL. */
function toOpenAIPart(part: ContentPart): OpenAI.Chat.ChatCompletionContentPart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const type = pictureType(part.image.bytes);
  if (!type) throw permanent('provider_rejected', 'OpenAI looks at PNG, JPEG and WebP pictures only.');
  return { type: 'image_url', image_url: { url: `data:${type};base64,${part.image.bytes.toString('base64')}` } };
}

const textOf = (content: ChatMessage['content']) =>
  typeof content === 'string'
    ? content
    : (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join(' ');

// SPEC CreateChatCompletionResponse, as loosely as compatible servers need:
// `arguments` is JSON text at OpenAI, an object at some servers.
const answerSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                type: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: z.unknown() }).nullish(),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullish(),
});

const finishReasons = ['stop', 'length', 'tool_calls', 'content_filter'] as const;

function answerOf(answer: unknown, name: string): ChatAnswer {
  const parsed = answerSchema.safeParse(answer);
  if (!parsed.success)
    throw permanent('provider_invalid_response', `${name} answered without a message.`, parsed.error);
  const [choice] = parsed.data.choices;
  const toolCalls = (choice!.message.tool_calls ?? []).flatMap((toolCall, index) =>
    toolCall.function && (toolCall.type ?? 'function') === 'function'
      ? [
          {
            id: toolCall.id || `call_${index}`,
            name: toolCall.function.name,
            arguments:
              typeof toolCall.function.arguments === 'string'
                ? toolCall.function.arguments
                : JSON.stringify(toolCall.function.arguments ?? {}),
          },
        ]
      : [],
  );
  const reason = choice!.finish_reason === 'function_call' ? 'tool_calls' : choice!.finish_reason;
  const known = finishReasons.find((finish) => finish === reason) ?? 'stop';
  const finishReason = known === 'stop' && toolCalls.length > 0 ? 'tool_calls' : known;
  const usage = parsed.data.usage;
  return {
    content: choice!.message.content ?? null,
    toolCalls,
    finishReason,
    ...(usage ? { usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } } : {}),
  };
}
