// Monthly budgets of agent runs (beyond the specification; see
// api/extensions.tsv): for global administrators and the tenant's
// administrators, the budget of all the tenant's runs and of each agent's
// runs in the tenant, with what this month has used (core/agents/budgets.ts).
import {
  agentBudgets,
  agentBudgetsSchema,
  budgetChange,
  setAgentBudget,
  setTenantAgentBudget,
} from '../../core/agents/budgets.ts';
import { defineRoute } from '../route.ts';
import { uuidParams } from '../schemas.ts';

const who =
  'For global administrators and the tenant’s administrators (403 for its other members and its service accounts, 404 ' +
  'for anyone else).';

export const routes = [
  defineRoute({
    key: 'GET /api/agents/tenant/{tenant_id}/budgets',
    access: 'signed-in',
    description:
      'The monthly budgets of the tenant’s agent runs — of all of them, and of each agent assigned to the tenant — with ' +
      'what this calendar month (UTC) has used: what finished runs were charged and what unfinished ones hold reserved. ' +
      who,
    request: { params: uuidParams('tenant_id') },
    responses: { 200: { description: 'The budgets', schema: agentBudgetsSchema } },
    async handler({ params }, { db, actor }) {
      return { body: await agentBudgets(db, actor, params.tenant_id) };
    },
  }),

  defineRoute({
    key: 'PUT /api/agents/tenant/{tenant_id}/budget',
    access: 'signed-in',
    description:
      'Sets (or, with null, lifts) what all the tenant’s agent runs may cost in a calendar month. A run started once it ' +
      'is spent is refused (402, type agent-budget-spent); one started before reserves no more than is left, and stops ' +
      `when its steps have cost that, saying so. ${who}`,
    request: { params: uuidParams('tenant_id'), body: budgetChange },
    responses: { 200: { description: 'The budgets', schema: agentBudgetsSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await setTenantAgentBudget(db, actor, params.tenant_id, body.monthly_budget) };
    },
  }),

  defineRoute({
    key: 'PUT /api/agents/{agent_id}/tenants/{tenant_id}/budget',
    access: 'signed-in',
    description:
      'Sets (or, with null, lifts) what the agent’s runs in the tenant may cost in a calendar month, as the tenant’s ' +
      `budget does for all its runs. 404 when the agent is not assigned to the tenant. ${who}`,
    request: { params: uuidParams('agent_id', 'tenant_id'), body: budgetChange },
    responses: { 200: { description: 'The budgets', schema: agentBudgetsSchema } },
    async handler({ params, body }, { db, actor }) {
      return { body: await setAgentBudget(db, actor, params.tenant_id, params.agent_id, body.monthly_budget) };
    },
  }),
];
