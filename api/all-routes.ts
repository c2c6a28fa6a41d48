// Every built route module. Every endpoint of the manifest has a route here
// (test/api/manifest.test.ts); one without would answer 501.
import { routes as adminAgentSteps } from './admin-agent-steps/router.ts';
import { routes as adminContentTypes } from './admin-content-types/router.ts';
import { routes as adminJobs } from './admin-jobs/router.ts';
import { routes as adminProviders } from './admin-providers/router.ts';
import { routes as adminQueue } from './admin-queue/router.ts';
import { routes as agents } from './agents/router.ts';
import { routes as agentRuns } from './agents/runs.ts';
import { routes as agentBudgets } from './agents/budgets.ts';
import { routes as auth } from './auth/router.ts';
import { routes as knowledgeBase } from './agents/knowledge-base.ts';
import { routes as knowledgeSearch } from './agents/knowledge-search.ts';
import { routes as knowledgeSources } from './agents/knowledge-sources.ts';
import { routes as cache } from './cache/router.ts';
import { routes as oauth } from './auth/oauth.ts';
import { routes as signup } from './auth/signup.ts';
import { routes as contact } from './contact/router.ts';
import { routes as contentTypes } from './contenttypes/router.ts';
import { routes as elements } from './elements/router.ts';
import { routes as fraud } from './fraud/router.ts';
import { routes as general } from './general/router.ts';
import { routes as generateWebsite } from './generate-website/router.ts';
import { routes as jobs } from './jobs/router.ts';
import { takingWebhooks } from './jobs/webhook-fields.ts';
import { routes as jobWebhooks } from './jobs/webhooks.ts';
import { routes as mcp } from './mcp/router.ts';
import { routes as media } from './media/router.ts';
import { routes as mediaFolders } from './media-folders/router.ts';
import { routes as mediaVideo } from './media/video.ts';
import { routes as pages } from './pages/router.ts';
import { routes as posts } from './posts/router.ts';
import { routes as postJobs } from './posts/jobs.ts';
import { routes as payments } from './payments/router.ts';
import { routes as publicContent } from './public-content/router.ts';
import { routes as publicPosts } from './public-content/posts.ts';
import { routes as publicMedia } from './public-media/router.ts';
import { routes as metrics } from './metrics/router.ts';
import { routes as monitoring } from './monitoring/router.ts';
import type { RouteDefinition } from './route.ts';
import { routes as search } from './search/router.ts';
import { routes as seo } from './seo/router.ts';
import { routes as serviceAccounts } from './service-accounts/router.ts';
import { routes as siteUsers } from './site-users/router.ts';
import { routes as siteStatistics } from './site-statistics/router.ts';
import { routes as previewTokens } from './preview-tokens/router.ts';
import { routes as sites } from './sites/router.ts';
import { routes as subscription } from './subscription/router.ts';
import { routes as systemPrompts } from './system-prompts/router.ts';
import { routes as globalCostSettings } from './global-cost-settings/router.ts';
import { routes as tenants } from './tenants/router.ts';
import { routes as webhookSecret } from './tenants/webhook-secret.ts';
import { routes as apiKeys } from './tenants/api-keys.ts';
import { routes as contentWebhooks } from './tenants/content-webhooks.ts';
import { routes as transactions } from './transactions/router.ts';
import { routes as transferPrompts } from './transferprompts/router.ts';
import { routes as translations } from './translations/router.ts';
import { routes as users } from './users/router.ts';

// Job-creating routes also take the webhook fields (./jobs/webhook-fields.ts).
export const allRoutes: RouteDefinition[] = [
  ...general,
  ...auth,
  ...signup,
  ...oauth,
  ...users,
  ...tenants,
  ...sites,
  ...siteUsers,
  ...serviceAccounts,
  ...transactions,
  ...globalCostSettings,
  ...jobs,
  ...adminJobs,
  ...adminAgentSteps,
  ...adminProviders,
  ...adminQueue,
  ...media,
  ...mediaVideo,
  ...mediaFolders,
  ...publicMedia,
  ...metrics,
  ...contentTypes,
  ...elements,
  ...pages,
  ...posts,
  ...postJobs,
  ...translations,
  ...publicContent,
  ...publicPosts,
  ...previewTokens,
  ...search,
  ...seo,
  ...generateWebsite,
  ...cache,
  ...adminContentTypes,
  ...payments,
  ...subscription,
  ...contact,
  ...fraud,
  ...siteStatistics,
  ...monitoring,
  ...systemPrompts,
  ...transferPrompts,
  ...agents,
  ...mcp,
  ...knowledgeBase,
  ...knowledgeSearch,
  ...knowledgeSources,
  ...agentRuns,
  ...agentBudgets,
  ...jobWebhooks,
  ...webhookSecret,
  ...apiKeys,
  ...contentWebhooks,
].map(takingWebhooks);
