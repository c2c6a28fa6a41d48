// Credit limits of agent runs through the HTTP API, against OpenAI's strict
// fake: a model priced apart for the tokens it reads and writes (4 and 20
// credits per 1,000), each step charged so; a run's own max_credits; and the
// monthly budgets admins set, of an agent in a tenant and of all the
// tenant's runs — a run reserves no more than is left and stops, saying
// which budget, when its steps have cost that; once spent, a run is refused
// (402) and leaves nothing behind.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { newAgent } from '../../helpers/agents.ts';
import { startFakeOpenAI, textModelEnv, type FakeOpenAI, type Script } from '../../helpers/fakes/openai.ts';
import { newTenant } from '../../helpers/factories.ts';
import { globalAdmin } from '../../helpers/identity.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { expectLedgerHolds } from '../../helpers/ledger.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
// Its listening socket would keep a lone run of this file from exiting.
afterAll(() => fake.close());
const withModel = () => textModelEnv(fake, '4/20');
const suite = jobsSuite(withModel);
let agentId: string;

beforeAll(async () => {
  const { t, a } = suite;
  const agent = await newAgent(t, await globalAdmin(t), { tools: ['knowledge_search'] }, [a.tenant.id]);
  agentId = agent.id;
  await giveCredits(t, a.site, 10_000, a.editor.user.id);
});
beforeEach(async () => {
  suite.worker ??= await startTestWorker(suite.t, withModel());
});
afterEach(() => fake.reset());

const budgets = () => `/api/agents/tenant/${suite.a.tenant.id}/budgets`;
const tenantBudget = () => `/api/agents/tenant/${suite.a.tenant.id}/budget`;
const agentBudget = (agent = agentId) => `/api/agents/${agent}/tenants/${suite.a.tenant.id}/budget`;
const put = (path: string, monthly_budget: unknown) =>
  request(suite.t.app).put(path).set(suite.a.admin.auth).send({ monthly_budget });
const startRun = (body: Record<string, unknown>) =>
  request(suite.t.app)
    .post(`/${suite.a.site.slug}/agents/${agentId}/runs`)
    .set(suite.a.editor.auth)
    .set('Prefer', 'wait=30')
    .send(body);

/** A model call that asks for a search, reading and writing 1,000 tokens each: 4 + 20 = 24 credits. */
const searching = (id: string): Script => ({
  kind: 'ok',
  reply: {
    toolCalls: [{ id, name: 'knowledge_search', arguments: '{"query":"ferry"}' }],
    usage: { promptTokens: 1000, completionTokens: 1000 },
  },
});

type Step = { kind: string; cost: number; input_tokens: number; output_tokens: number };
const stepsOf = async (runId: string) =>
  (
    await request(suite.t.app)
      .get(`/${suite.a.site.slug}/agents/${agentId}/runs/${runId}`)
      .set(suite.a.editor.auth)
      .expect(200)
  ).body.steps as Step[];

const messagesOfRuns = () =>
  suite.t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from agent_messages where tenant_id = ${suite.a.tenant.id}`);

describe('prices of tokens read and written', () => {
  it('charges each model call its input tokens at one price and its output at the other', async () => {
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { content: 'Nine.', usage: { promptTokens: 1500, completionTokens: 250 } },
    });
    const res = await startRun({ input: 'When?' }).expect(200);
    const [step] = await stepsOf(res.body.id);
    // 1.5 × 4 + 0.25 × 20 = 11; reserved: 20,000 tokens at the dearer price, 400.
    expect(step).toMatchObject({ kind: 'model', input_tokens: 1500, output_tokens: 250 });
    expect(step!.cost).toBeCloseTo(11, 6);
    expect(res.body).toMatchObject({ status: 'succeeded', credits_reserved: 400, credits_charged: 11 });
  });

  it('shows both prices to global admins', async () => {
    const res = await request(suite.t.app).get('/admin/providers').set(suite.admin.auth).expect(200);
    const text = res.body.chains.find((chain: { chain: string }) => chain.chain === 'text');
    expect(text.providers[0].models[0]).toMatchObject({ model: 'gpt-5.4-mini', price: 4, output_price: 20 });
  });
});

describe('a run that fails', () => {
  it('is charged the model calls it made before failing, the rest released', async () => {
    const refusal = {
      error: { message: 'Invalid value for messages.', type: 'invalid_request_error', param: null, code: null },
    };
    fake.script('chat/completions', searching('call_1'), { kind: 'refuse', refusal: { status: 400, body: refusal } });
    const res = await startRun({ input: 'Find the ferry.' }).expect(200);
    expect(res.body).toMatchObject({ status: 'failed', credits_reserved: 400, credits_charged: 24 });
    const ledger = await ledgerFor(suite.t, res.body.id);
    expect(ledger.map((entry) => [entry.kind, entry.amount, entry.reserved_change])).toEqual([
      ['reservation', 0, 400],
      ['debit', -24, -24],
      ['release', 0, -376],
    ]);
    await expectLedgerHolds(suite.t);
  });
});

describe('a run’s own max_credits', () => {
  it('reserves no more and stops when its steps have cost that much, saying so', async () => {
    fake.script('chat/completions', searching('call_1'), searching('call_2'));
    const res = await startRun({ input: 'Find the ferry.', max_credits: 30 }).expect(200);
    expect(res.body.output).toMatchObject({ stopped: 'max_credits', steps: 4 });
    expect(res.body.output.stopped_because).toBe('its steps cost the credits its max_credits allows');
    // Two calls of 24 each: the second went past the limit, which is all the run may be charged.
    expect(res.body).toMatchObject({ credits_reserved: 30, credits_charged: 30 });
    expect(fake.requests.filter((recorded) => recorded.path === '/v1/chat/completions')).toHaveLength(2);
    await expectLedgerHolds(suite.t);
  });

  it('is a whole number of credits, at least 1', async () => {
    for (const max_credits of [0, 1.5, '10'])
      await startRun({ input: 'Hi.', max_credits })
        .expect(422)
        .expect((res) => expect(res.body.errors[0].path).toBe('body.max_credits'));
  });
});

describe('monthly budgets', () => {
  it('starts with none set, and what the month has used', async () => {
    const res = await request(suite.t.app).get(budgets()).set(suite.a.admin.auth).expect(200);
    expect(res.body).toMatchObject({
      tenant_id: suite.a.tenant.id,
      tenant: { monthly_budget: null, remaining: null },
      agents: [{ agent_id: agentId, monthly_budget: null, remaining: null }],
    });
    // The runs above: 11, 24 (failed) and 30 credits charged.
    expect(res.body.tenant.used).toBe(65);
    expect(res.body.agents[0].used).toBe(65);
    expect(Date.parse(res.body.resets_at)).toBeGreaterThan(Date.now());
    expect(new Date(res.body.month_start).getUTCDate()).toBe(1);
  });

  it('holds a run to what is left of the agent’s budget, then refuses the next with the reason', async () => {
    const set = await put(agentBudget(), 85).expect(200);
    expect(set.body.agents[0]).toMatchObject({ monthly_budget: 85, used: 65, remaining: 20 });

    fake.script('chat/completions', searching('call_1'), searching('call_2'));
    const held = await startRun({ input: 'Find the ferry.' }).expect(200);
    expect(held.body).toMatchObject({ credits_reserved: 20, credits_charged: 20 });
    expect(held.body.output).toMatchObject({ stopped: 'agent_budget' });
    expect(held.body.output.stopped_because).toContain('the agent’s monthly budget');
    expect((await ledgerFor(suite.t, held.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit']);

    const messages = await messagesOfRuns();
    const refused = await startRun({ input: 'Again.' }).expect(402);
    expect(refused.body).toMatchObject({
      type: '/problems/agent-budget-spent',
      status: 402,
      budget: 'agent_budget',
      monthly_budget: 85,
      used: 85,
    });
    expect(refused.body.detail).toContain('The agent’s monthly budget in this tenant (85 credits) is spent');
    expect(await messagesOfRuns()).toBe(messages);
    await expectLedgerHolds(suite.t);
  });

  it('applies the tenant’s budget of all runs too, the tighter of the two, until lifted', async () => {
    await put(agentBudget(), null).expect(200);
    const set = await put(tenantBudget(), 50).expect(200);
    expect(set.body.tenant).toMatchObject({ monthly_budget: 50, used: 85, remaining: 0 });
    const refused = await startRun({ input: 'Again.' }).expect(402);
    expect(refused.body).toMatchObject({ budget: 'tenant_budget', monthly_budget: 50 });

    await put(tenantBudget(), 124).expect(200);
    await put(agentBudget(), 1000).expect(200);
    fake.script('chat/completions', {
      kind: 'ok',
      reply: { content: 'Nine.', usage: { promptTokens: 100, completionTokens: 10 } },
    });
    // 39 left of the tenant's 124: the tighter budget is what the run reserves.
    const run = await startRun({ input: 'When?' }).expect(200);
    expect(run.body).toMatchObject({ status: 'succeeded', credits_reserved: 39, credits_charged: 1 });
    expect(run.body.input.credit_limit).toEqual({ credits: 39, by: 'tenant_budget' });

    await put(tenantBudget(), null).expect(200);
    await put(agentBudget(), null).expect(200);
    const lifted = await request(suite.t.app).get(budgets()).set(suite.a.admin.auth).expect(200);
    expect(lifted.body.tenant).toMatchObject({ monthly_budget: null, used: 86 });
  });

  it('refuses what is not a budget, an agent not assigned to the tenant, and callers who are not its admins', async () => {
    for (const bad of [-1, 1.5, '10']) await put(tenantBudget(), bad).expect(422);
    await request(suite.t.app).put(tenantBudget()).set(suite.a.admin.auth).send({}).expect(422);
    const other = await newAgent(suite.t, await globalAdmin(suite.t), {}, [(await newTenant(suite.t)).id]);
    await put(agentBudget(other.id), 10).expect(404);
    await request(suite.t.app).get(budgets()).expect(401);
    await request(suite.t.app).get(budgets()).set(suite.a.editor.auth).expect(403);
    await request(suite.t.app).put(tenantBudget()).set(suite.a.editor.auth).send({ monthly_budget: 1 }).expect(403);
    await request(suite.t.app).get(budgets()).set(suite.b.admin.auth).expect(404);
    await request(suite.t.app).put(agentBudget()).set(suite.b.admin.auth).send({ monthly_budget: 1 }).expect(404);
    await request(suite.t.app).get(budgets()).set(suite.admin.auth).expect(200);
  });
});
