// POST /{site}/posts/from-pdf with PDFs that are small to send and costly to
// read (a deflated content stream, test/helpers/pdf.ts): the reading runs on
// a thread of its own, so the deadline holds however long pdf.js would take,
// the event loop (the API's too, under `npm start`) is never held meanwhile,
// a PDF that outgrows the thread's heap fails alone, and each failure gives
// its credits back.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { signedIn, type Caller } from '../../helpers/factories.ts';
import { giveCredits, jobsSuite, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { makePdf } from '../../helpers/pdf.ts';

const suite = jobsSuite({ PDF_MAX_PAGES: '5' });
let author: Caller;

beforeAll(async () => {
  const { t, a } = suite;
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  await giveCredits(t, a.site, 100, author.user.id);
});

const upload = (file: Buffer) =>
  request(suite.t.app)
    .post(`/${suite.a.site.slug}/posts/from-pdf`)
    .set(author.auth)
    .set('Prefer', 'wait=30')
    .attach('file', file, 'heavy.pdf');

it('fails a PDF still being read at the deadline, gives its credits back, and never holds the event loop', async () => {
  suite.worker = await startTestWorker(suite.t, { PDF_TIMEOUT_MS: '3000' });
  // Three million text operators in 60 kB: pdf.js reads them for 6 s or more in one synchronous run, well past
  // the deadline. The deadline is long enough that a pause of the whole process (a full garbage collection on a
  // busy machine) stays well below half of it, so only a read that held the loop can fail the last line.
  const slow = makePdf([{ runs: 3_000_000 }]);
  expect(slow.length).toBeLessThan(64_000);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const job = await upload(slow).expect(200);
  loop.disable();
  expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'pdf_timeout' } });
  expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  // The read ran at least to its deadline; the loop went on turning throughout (it was held seconds before).
  const ran = Date.parse(job.body.finished_at) - Date.parse(job.body.started_at);
  expect(ran).toBeGreaterThanOrEqual(3000);
  expect(loop.max / 1e6).toBeLessThan(ran / 2);
});

it('fails a PDF that outgrows the reading thread’s memory, gives its credits back, and reads the next one', async () => {
  suite.worker = await startTestWorker(suite.t, { PDF_MEMORY_MB: '32' });
  // Four million words in one run of text, 30 kB deflated: over a GB of pdf.js's heap to read in full.
  const job = await upload(makePdf([{ words: 4_000_000 }])).expect(200);
  expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'pdf_too_complex' } });
  expect(job.body.error.message).toBe('Reading the PDF needed more than the 32 MB of memory an import may use.');
  expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  const next = await upload(makePdf([[{ text: 'Still reading PDFs after that one.' }]])).expect(200);
  expect(next.body).toMatchObject({ status: 'succeeded', credits_charged: 1, output: { pages: 1 } });
});
