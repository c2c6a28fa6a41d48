// The AI providers as configured, for global admins (beyond the
// specification; see api/extensions.tsv): each capability's chain, the
// models it allows and what they cost, and how each vendor did lately.
import { providersOverview, providersOverviewSchema } from '../../core/providers/overview.ts';
import { defineRoute } from '../route.ts';

export const routes = [
  defineRoute({
    key: 'GET /admin/providers',
    access: 'global-admin',
    description:
      'Each chain of providers (a capability, or a video endpoint) in the order its jobs try them, the models each ' +
      'allows with the sizes, lengths, billing unit and default price the catalog knows; each vendor’s base URL and ' +
      'limits (never its key), and its last hour: calls, failures, median and 95th percentile latency, last errors.',
    responses: { 200: { description: 'The providers', schema: providersOverviewSchema } },
    async handler(_input, { db, actor, services }) {
      return { body: await providersOverview(db, actor, services.config) };
    },
  }),
];
