// Baseline for npm run bench: bare Express and node-postgres reading one row
// by primary key per request (the media item the API's reads are measured
// on), with a pool as large as the API's. Nothing else: no auth, no logging,
// no validation.
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
});
const app = express();
app.get('/media/:id', async (req, res, next) => {
  try {
    const { rows } = await pool.query('select * from media_items where id = $1', [req.params.id]);
    if (!rows[0]) res.status(404).end();
    else res.json(rows[0]);
  } catch (error) {
    next(error);
  }
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
