// The admin page for the job tables at /admin/ui/: a few static files (no
// build step, no CDN) whose script calls the JSON API with the admin's token.
// The page holds no data itself, so it is served to anyone; everything it
// shows comes from the token-protected endpoints. Its CSP allows only its
// own script, style and API: no inline script or style, no framing, no
// form posts elsewhere. Images and players may show blob: URLs, which is how
// the script previews a job's media: the files need the bearer token, so it
// fetches them itself.
import express, { type Router } from 'express';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const folder = path.join(import.meta.dirname, 'admin-ui');
const files: Record<string, { type: string; body: Buffer }> = {
  '': { type: 'text/html; charset=utf-8', body: readFileSync(path.join(folder, 'index.html')) },
  ...Object.fromEntries(
    ['app.js', 'session.js', 'dom.js', 'detail.js', 'bulk.js', 'queue.js', 'charts.js'].map((name) => [
      name,
      { type: 'text/javascript; charset=utf-8', body: readFileSync(path.join(folder, name)) },
    ]),
  ),
  'style.css': { type: 'text/css; charset=utf-8', body: readFileSync(path.join(folder, 'style.css')) },
  'icon.svg': { type: 'image/svg+xml', body: readFileSync(path.join(folder, 'icon.svg')) },
};

const policy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' blob:",
  'media-src blob:',
  "form-action 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function adminUiRouter(): Router {
  const router = express.Router({ strict: true, caseSensitive: true });
  router.get('/admin/ui', (_req, res) => res.redirect(301, '/admin/ui/'));
  router.get('/admin/ui/:file', (req, res, next) => serve(req.params.file, res, next));
  router.get('/admin/ui/', (_req, res, next) => serve('', res, next));
  return router;
}

function serve(name: string, res: express.Response, next: express.NextFunction) {
  const file = Object.hasOwn(files, name) ? files[name] : undefined;
  if (!file) {
    next();
    return;
  }
  res.setHeader('Content-Security-Policy', policy);
  res.setHeader('Cache-Control', 'no-cache');
  res.type(file.type).send(file.body);
}
