// helmet's defaults; /docs needs nothing looser, because the documentation UI
// loads only its own scripts from this origin.
import helmet from 'helmet';

export function securityHeaders() {
  return helmet({
    contentSecurityPolicy: {
      directives: {
        'img-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        // Plain-http deployments (localhost, an internal address) would have
        // every /docs asset rewritten to https and fail to load.
        'upgrade-insecure-requests': null,
      },
    },
  });
}
