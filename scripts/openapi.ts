// `npm run openapi`: prints the OpenAPI 3.1 document (as /openapi.json serves
// it) without starting anything, for client generators and reviews.
import { allEndpoints } from '../api/manifest.ts';
import { routesByKey } from '../api/mount.ts';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { allRoutes } from '../api/all-routes.ts';
import { service } from '../core/version.ts';

const document = buildOpenApiDocument(allEndpoints, routesByKey(allEndpoints, allRoutes), {
  title: 'Content and Agent Platform API',
  version: service.version,
});
process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
