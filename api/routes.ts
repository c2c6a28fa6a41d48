// Every built route module. An endpoint of the manifest without a route here
// answers 501 until its issue is done.
import { routes as general } from './general/router.ts';
import type { RouteDefinition } from './route.ts';

export const allRoutes: RouteDefinition[] = [...general];
