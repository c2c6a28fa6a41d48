import express from 'express';
import { readFileSync } from 'node:fs';
import { createPool, sql } from './db/pool.ts';
import { mediaColumns, mediaItemSchema } from './core/media/items.ts';
const url = readFileSync('/tmp/dburl', 'utf8').trim();
const pool = await createPool(url, { maxPoolSize: 10 });
const app = express();
app.get('/media/:id', async (req, res) => {
  res.json(await pool.maybeOne(sql.type(mediaItemSchema)`select ${mediaColumns} from media_items where id = ${req.params.id}`));
});
const server = app.listen(4002, '127.0.0.1');
process.on('SIGTERM', () => { server.close(); pool.end(); });
