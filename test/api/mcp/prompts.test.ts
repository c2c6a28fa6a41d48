// The MCP server's prompts, driven by the SDK's own client: the system
// prompts as system/{type} and the transfer prompts as transfer/{name}, each
// listed for every signed-in caller (as over REST), a transfer prompt taking
// its variables as arguments and answered filled in. Arguments that do not
// fit are a JSON-RPC error, not a crash.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { closeMcpClients, connectMcp, listen, refusal, type Listening } from '../../helpers/mcp.ts';

let t: TestApp;
let server: Listening;
let a: Staffed;
let admin: Caller;
const handover = `Hand over ${unique()}`;
const seoType = `seo-${unique()}`;

beforeAll(async () => {
  t = await startTestApp();
  server = await listen(t.app);
  a = await staffedTenant(t);
  admin = await globalAdmin(t);
  await request(t.app)
    .post(`/system-prompts/${seoType}`)
    .set(admin.auth)
    .send({ content: 'You write titles that search engines like.', description: 'For SEO fields.' })
    .expect(201);
  await request(t.app)
    .post('/transferprompts/')
    .set(admin.auth)
    .send({
      name: handover,
      description: 'From the researcher to the writer',
      template: 'Write about {{topic}} for {{ audience }}. Notes: {{notes}}',
      variables: [
        { name: 'topic', description: 'What the piece is about' },
        { name: 'audience', description: 'Who reads it' },
        { name: 'notes' },
      ],
    })
    .expect(201);
});
afterAll(async () => {
  await closeMcpClients();
  await server?.close();
  await stopTestApp(t);
});

const connect = async (auth: Caller['auth']) => (await connectMcp(server.url, auth)).client;

async function everyPrompt(client: Client) {
  const prompts = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listPrompts(cursor ? { cursor } : {});
    prompts.push(...page.prompts);
    pages.push(page.prompts.length);
    cursor = page.nextCursor;
  } while (cursor);
  return { prompts, pages };
}

describe('prompts/list', () => {
  it('lists the system prompts and the transfer prompts, a transfer prompt’s variables as its arguments', async () => {
    const client = await connect(a.author.auth);
    expect(client.getServerCapabilities()).toMatchObject({ prompts: {} });
    const { prompts } = await everyPrompt(client);
    const byName = Object.fromEntries(prompts.map((prompt) => [prompt.name, prompt]));
    expect(byName[`system/${seoType}`]).toMatchObject({
      title: `System prompt: ${seoType}`,
      description: expect.stringContaining('For SEO fields.'),
    });
    expect(byName[`system/${seoType}`]).not.toHaveProperty('arguments');
    expect(byName[`transfer/${handover}`]).toEqual({
      name: `transfer/${handover}`,
      title: handover,
      description: 'From the researcher to the writer',
      arguments: [
        { name: 'topic', description: 'What the piece is about', required: true },
        { name: 'audience', description: 'Who reads it', required: true },
        { name: 'notes', required: true },
      ],
    });
    // The system prompts come first.
    const names = prompts.map((prompt) => prompt.name);
    expect(names.indexOf(`system/${seoType}`)).toBeLessThan(names.indexOf(`transfer/${handover}`));
  });

  it('is a service account’s to read too, as over REST', async () => {
    const bot = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    const { prompts } = await everyPrompt(await connect(bot.auth));
    expect(prompts.map((prompt) => prompt.name)).toContain(`transfer/${handover}`);
  });

  it('pages with cursors through every prompt, each once', async () => {
    const names: string[] = [];
    for (let start = 0; start < 105; start += 15) {
      const batch = Array.from({ length: Math.min(15, 105 - start) }, async (_, i) => {
        const name = `Paged ${unique()} ${start + i}`;
        await request(t.app).post('/transferprompts/').set(admin.auth).send({ name, template: 'Go on.' }).expect(201);
        return name;
      });
      names.push(...(await Promise.all(batch)));
    }
    const client = await connect(a.editor.auth);
    const { prompts, pages } = await everyPrompt(client);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]).toBe(100);
    const listed = prompts.map((prompt) => prompt.name);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual(expect.arrayContaining([...names.map((name) => `transfer/${name}`), `system/${seoType}`]));
    const bad = await refusal(client.listPrompts({ cursor: 'nonsense' }));
    expect(bad).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 400 } });
  });
});

describe('prompts/get', () => {
  it('fills a transfer prompt’s template with the arguments, its name taken regardless of case', async () => {
    const client = await connect(a.editor.auth);
    const got = await client.getPrompt({
      name: `transfer/${handover.toUpperCase()}`,
      arguments: { topic: 'tides', audience: 'sailors', notes: 'keep {{topic}} literal' },
    });
    expect(got).toEqual({
      description: 'From the researcher to the writer',
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: 'Write about tides for sailors. Notes: keep {{topic}} literal' },
        },
      ],
    });
  });

  it('answers a system prompt as a user message, saying it is the system prompt', async () => {
    const client = await connect(a.author.auth);
    const got = await client.getPrompt({ name: `system/${seoType}` });
    expect(got.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'You write titles that search engines like.' } },
    ]);
    expect(got.description).toContain('system prompt');
  });

  it('refuses arguments that do not fit, and unknown prompts, with JSON-RPC errors', async () => {
    const client = await connect(a.editor.auth);
    const missing = await refusal(
      client.getPrompt({ name: `transfer/${handover}`, arguments: { topic: 'tides', colour: 'blue' } }),
    );
    expect(missing.code).toBe(ErrorCode.InvalidParams);
    expect(missing.problem).toMatchObject({ status: 422 });
    expect(missing.problem.errors.map((error: { path: string }) => error.path).sort()).toEqual([
      'arguments.audience',
      'arguments.colour',
      'arguments.notes',
    ]);
    const toSystem = await refusal(client.getPrompt({ name: `system/${seoType}`, arguments: { x: '1' } }));
    expect(toSystem).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 422 } });
    for (const name of ['transfer/No such prompt', 'system/no-such-type', 'system/Not A Type', 'nothing']) {
      const unknown = await refusal(client.getPrompt({ name }));
      expect(unknown).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 404 } });
    }
    // Arguments that are not text are refused by the protocol's own schema.
    const notText = await refusal(
      client.getPrompt({ name: `transfer/${handover}`, arguments: { topic: 3 } as unknown as Record<string, string> }),
    );
    expect(notText.code).toBe(ErrorCode.InvalidParams);
    // The server is still there.
    expect((await client.getPrompt({ name: `system/${seoType}` })).messages).toHaveLength(1);
  });
});
