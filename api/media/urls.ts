// The links media items and jobs are answered with are made where clients
// reach this API (the request's baseUrl) and signed with the process's key.
import { signingKey, type FileLinks } from '../../core/media/urls.ts';
import type { RouteContext } from '../route.ts';

export const fileLinks = (context: Pick<RouteContext, 'baseUrl' | 'services'>): FileLinks => ({
  base: context.baseUrl,
  secret: signingKey(context.services.config),
});
