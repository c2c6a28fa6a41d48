// GET /problems/{name}: what a problem's `type` link leads to (RFC 9457 §3.1.1
// asks that it explain the problem to a person). HTML for a browser, JSON for
// a client that asks for it; /problems/ lists them all. Like /docs, these are
// pages about the API rather than endpoints of it, so /openapi.json does not
// list them; the problem schema's `type` says where they are.
import express, { type Request, type Response, type Router } from 'express';
import { problemPages, type ProblemPage } from './catalog.ts';

export function problemPagesRouter(): Router {
  const router = express.Router({ strict: false, caseSensitive: true });
  router.get('/problems', (req, res) => {
    const all = [...problemPages.values()];
    answer(req, res, { problems: all.map(summary) }, listPage(all));
  });
  router.get('/problems/:name', (req, res, next) => {
    const page = problemPages.get(req.params.name);
    if (!page) {
      next();
      return;
    }
    answer(req, res, { type: `/problems/${page.name}`, ...withoutName(page) }, problemPage(page));
  });
  return router;
}

function answer(req: Request, res: Response, json: unknown, html: string) {
  res.setHeader('Cache-Control', 'public, max-age=3600');
  res.vary('Accept');
  if (req.accepts(['html', 'json']) === 'json') res.json(json);
  else res.type('html').send(html);
}

const summary = (page: ProblemPage) => ({ type: `/problems/${page.name}`, status: page.status, title: page.title });
const withoutName = ({ name: _name, ...rest }: ProblemPage) => rest;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`).replace(/`([^`]+)`/g, '<code>$1</code>');

const document = (title: string, body: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escape(title)}</title>
  </head>
  <body>
${body}
  </body>
</html>
`;

function problemPage(page: ProblemPage): string {
  return document(
    `${page.title} (${page.status})`,
    `    <h1>${escape(page.title)}</h1>
    <p>Problem type <code>/problems/${page.name}</code>, answered with status <strong>${page.status}</strong>.</p>
    <h2>When it happens</h2>
    <p>${escape(page.when)}</p>
    <h2>What to do</h2>
    <p>${escape(page.action)}</p>
    <p>Every problem is an RFC 9457 <code>application/problem+json</code> body with <code>type</code>, <code>title</code>,
      <code>status</code>, <code>detail</code> and <code>request_id</code>. <a href="/problems/">All problem types</a> ·
      <a href="/docs">API documentation</a></p>`,
  );
}

function listPage(pages: ProblemPage[]): string {
  const rows = pages
    .map(
      (page) =>
        `      <tr><td>${page.status}</td><td><a href="/problems/${page.name}">${page.name}</a></td><td>${escape(page.title)}</td></tr>`,
    )
    .join('\n');
  return document(
    'Problem types',
    `    <h1>Problem types</h1>
    <p>The <code>type</code> of each problem the API answers with. <a href="/docs">API documentation</a></p>
    <table>
      <tr><th>status</th><th>type</th><th>title</th></tr>
${rows}
    </table>`,
  );
}
