// Where test databases live: TEST_DATABASE_URL's server when set, otherwise an
// embedded PostgreSQL in a temporary folder, started for this run only.
export const runId = `${process.pid}_${Date.now().toString(36)}`;

export type ClusterInfo = { adminUrl: string; template: string; prefix: string };

export function clusterInfo(): ClusterInfo {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  const prefix = process.env.TEST_PG_PREFIX;
  if (!adminUrl || !template || !prefix) throw new Error('The test cluster is not set up: run the tests with npm test');
  return { adminUrl, template, prefix };
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}
