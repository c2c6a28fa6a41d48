// A streamed chat answer, put back together (openai/openai-openapi f85dbe2,
// components.schemas.CreateChatCompletionStreamResponse, "SPEC"): chunks of
// `chat.completion.chunk` whose `choices[0].delta` carries the next piece of
// text (`content`) or of a tool call (`tool_calls`, ChatCompletionMessageToolCallChunk:
// its `index` in every piece, its id and function name in the first, its
// arguments in fragments after), the last choice chunk its `finish_reason`,
// and — asked with `stream_options.include_usage` — one more chunk with no
// choices and the `usage` of the whole answer (ChatCompletionStreamOptions).
// The result has the shape of a whole answer (CreateChatCompletionResponse),
// so that one reading (./chat.ts) serves both.
//
// What compatible servers do otherwise, tolerated:
// - Some send a tool call's arguments as an object in one piece (as they do
//   unstreamed): it is written out as JSON.
// - Ollama's endpoints reuse index 0 for each call of a parallel batch, telling
//   them apart by id alone (nousresearch/hermes-agent, agent/chat_completion_helpers_tool_calls.py):
//   a new id at an index already holding another call opens a call of its own.
// - A server that does not honour include_usage sends no usage: the caller
//   estimates the tokens.
import { z } from 'zod';
import { transient } from '../../jobs/errors.ts';

// SPEC CreateChatCompletionStreamResponse and ChatCompletionStreamResponseDelta, as loosely as servers need.
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().nullish(),
                  id: z.string().nullish(),
                  type: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.unknown() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).nullish(),
});

type CallSoFar = { id: string | null; type: string | null; name: string; arguments: string[] };

/** The whole answer the chunks make, as CreateChatCompletionResponse has it; `onText` hears the text as it comes. */
export async function collectStream(chunks: AsyncIterable<unknown>, onText: (delta: string) => void, name: string) {
  const content: string[] = [];
  const calls: CallSoFar[] = [];
  /** The call each index last opened. */
  const atIndex = new Map<number, CallSoFar>();
  let finishReason: string | null = null;
  let usage: z.infer<typeof chunkSchema>['usage'] = null;
  for await (const raw of chunks) {
    const chunk = chunkSchema.safeParse(raw);
    // A chunk we cannot read is left out rather than ending an answer that may yet be whole.
    if (!chunk.success) continue;
    usage = chunk.data.usage ?? usage;
    // One choice is asked for (n is not sent): its index is 0.
    const choice = chunk.data.choices?.find((each) => (each.index ?? 0) === 0);
    if (!choice) continue;
    const text = choice.delta?.content;
    if (text) {
      content.push(text);
      onText(text);
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const index = piece.index ?? 0;
      let call = atIndex.get(index);
      if (!call || (piece.id && call.id && piece.id !== call.id)) {
        call = { id: null, type: null, name: '', arguments: [] };
        calls.push(call);
        atIndex.set(index, call);
      }
      call.id ||= piece.id ?? null;
      call.type ||= piece.type ?? null;
      if (piece.function?.name && !call.name) call.name = piece.function.name;
      const fragment = piece.function?.arguments;
      if (typeof fragment === 'string') call.arguments.push(fragment);
      else if (fragment !== undefined && fragment !== null) call.arguments.push(JSON.stringify(fragment));
    }
    finishReason = choice.finish_reason ?? finishReason;
  }
  // SPEC: every choice ends with a chunk naming its finish_reason; a stream that closed before it broke off.
  if (finishReason === null) throw transient('provider_unavailable', `${name} broke off its answer.`);
  return {
    choices: [
      {
        message: {
          content: content.length ? content.join('') : null,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: call.type,
            function: { name: call.name, arguments: call.arguments.join('') },
          })),
        },
        finish_reason: finishReason,
      },
    ],
    usage,
  };
}
