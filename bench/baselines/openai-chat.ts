// The model of the agents bench (bench/agents.ts): OpenAI's strict fake
// (test/helpers/fakes/openai.ts) answering chat at once, in a process of its
// own as a vendor is, so that its work falls on neither the platform's
// process nor the bench's. An agent run's model writes one draft through
// create_post, then answers; a bare chat call (no tools offered) is answered
// with text. Prints {url} once listening; each line read on stdin is answered
// with the time its event loop has been busy so far and the calls answered,
// from which the bench reckons the model's own time per call.
import { createInterface } from 'node:readline';
import { startFakeOpenAI, type ChatReply } from '../../test/helpers/fakes/openai.ts';

const fake = await startFakeOpenAI({ apiKey: process.env.OPENAI_API_KEY! });
let answered = 0;
let drafts = 0;
const usage = { promptTokens: 400, completionTokens: 40 };

function reply(body: Record<string, unknown>): ChatReply {
  answered++;
  // Answers for every call the bench makes, scripted in batches as they are used; the recorded requests are
  // the tests' to read, and a bench would only pile them up.
  if (answered > scripted - batch / 2) {
    refill();
    fake.requests.length = 0;
  }
  const messages = body.messages as { role: string }[];
  if (!body.tools) return { content: 'A bare answer.', usage };
  if (!messages.some((message) => message.role === 'tool'))
    return {
      toolCalls: [
        {
          name: 'create_post',
          arguments: JSON.stringify({ title: `Bench draft ${++drafts}`, body: 'Written by the agents bench.' }),
        },
      ],
      usage,
    };
  return { content: 'I wrote the draft.', usage };
}

const batch = 1000;
let scripted = 0;
const refill = () => {
  fake.script('chat/completions', ...Array.from({ length: batch }, () => ({ kind: 'ok' as const, reply })));
  scripted += batch;
};
refill();

const busy = () => performance.eventLoopUtilization().active;
createInterface({ input: process.stdin }).on('line', () => {
  process.stdout.write(`${JSON.stringify({ busyMs: busy(), answered })}\n`);
});
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
