// Baseline for npm run bench: bare Express answering a small JSON document,
// nothing else. The API's cheapest route is measured against it; /bytes/N
// answers a JSON document of N bytes, so that an answer of that size (a
// cached page) can be measured against the same work with nothing around it.
import express from 'express';

const app = express();
app.get('/', (_req, res) => {
  res.json({ status: 'ok' });
});
const documents = new Map<number, Buffer>();
app.get('/bytes/:n', (req, res) => {
  const n = Math.min(1_000_000, Math.max(16, Number(req.params.n) || 16));
  let body = documents.get(n);
  if (!body) documents.set(n, (body = Buffer.from(JSON.stringify({ text: 'x'.repeat(n - 12) }))));
  res.type('application/json').send(body);
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
