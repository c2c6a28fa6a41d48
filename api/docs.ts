// Interactive documentation at /docs, served entirely from the swagger-ui-dist
// package: no CDN, so it works offline and under a strict CSP.
import express, { type Router } from 'express';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pageSecurityHeaders } from './middleware/security-headers.ts';

const assets = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>API documentation</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// A file rather than an inline script, so the page needs no 'unsafe-inline'.
// validatorUrl: null keeps the UI from calling the public validator service.
const init = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  persistAuthorization: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout'
});
`;

export function docsRouter(): Router {
  const router = express.Router({ strict: false });
  router.use('/docs', pageSecurityHeaders());
  router.get('/docs', (_req, res) => res.type('html').send(page));
  router.get('/docs/init.js', (_req, res) => res.type('js').send(init));
  router.use('/docs', express.static(assets, { index: false, maxAge: '1d' }));
  return router;
}
