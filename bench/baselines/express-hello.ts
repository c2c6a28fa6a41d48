// Baseline for npm run bench: bare Express answering a small JSON document,
// nothing else. The API's cheapest route is measured against it.
import express from 'express';

const app = express();
app.get('/', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
