// POST /{site}/posts/from-pdf: a PDF made by the test (test/helpers/pdf.ts)
// becomes a draft post, large type as headings; encrypted, broken and
// image-only PDFs fail the job with their codes and charge nothing; size and
// page caps hold; the upload is not left behind in storage.
import { existsSync } from 'node:fs';
import request from 'supertest';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { giveCredits, jobsSuite, ledgerFor, localFile, startTestWorker } from '../../helpers/jobs.ts';
import { brokenPdf, makePdf } from '../../helpers/pdf.ts';

const suite = jobsSuite({ PDF_MAX_BYTES: '100000', PDF_MAX_PAGES: '5' });
let author: Caller;

beforeAll(async () => {
  const { t, a } = suite;
  author = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
  for (const caller of [a.editor, author]) await giveCredits(t, a.site, 100, caller.user.id);
});

const upload = (file: Buffer, fields: Record<string, string> = {}, auth = suite.a.editor.auth) => {
  let call = request(suite.t.app)
    .post(`/${suite.a.site.slug}/posts/from-pdf`)
    .set(auth)
    .set('Prefer', 'wait=20')
    .attach('file', file, 'report.pdf');
  for (const [name, value] of Object.entries(fields)) call = call.field(name, value);
  return call;
};

it('makes a draft post of its text, headings from large type, and charges a unit a page', async () => {
  suite.worker = await startTestWorker(suite.t);
  const pdf = makePdf([
    [
      { text: 'Annual Report', size: 24 },
      { text: 'This year the harbour saw more ships than ever before.' },
      { text: 'The lighthouse was repainted in spring.' },
      { text: 'Outlook', size: 18 },
      { text: 'Next year we expect calmer seas & fewer storms.' },
    ],
    [{ text: 'The second page ends the report.' }],
  ]);
  const job = await upload(pdf, {}, author.auth).expect(200);
  expect(job.body).toMatchObject({
    status: 'succeeded',
    kind: 'pdf_import',
    credits_charged: 2,
    output: { pages: 2, title: 'Annual Report', headings: 1 },
  });
  expect(job.body.credits_reserved).toBe(5);
  const post = await request(suite.t.app)
    .get(`/${suite.a.site.slug}/posts/${job.body.output.post_id}`)
    .set(author.auth)
    .expect(200);
  expect(post.body).toMatchObject({
    title: 'Annual Report',
    status: 'draft',
    body_format: 'html',
    author_id: author.user.id,
    excerpt: 'This year the harbour saw more ships than ever before. The lighthouse was repainted in spring.',
    source: { kind: 'pdf', url: 'report.pdf', etag: expect.stringMatching(/^"sha256-[0-9a-f]{64}"$/) },
  });
  expect(post.body.body).toBe(
    '<p>This year the harbour saw more ships than ever before. The lighthouse was repainted in spring.</p>\n' +
      '<h2>Outlook</h2>\n<p>Next year we expect calmer seas &amp; fewer storms.</p>\n<p>The second page ends the report.</p>',
  );
  expect(existsSync(localFile(suite.t, job.body.input.file_key))).toBe(false);
});

it('takes the title given, and reserves only max_pages', async () => {
  suite.worker = await startTestWorker(suite.t);
  const job = await upload(makePdf([[{ text: 'Just one line of text here.' }]]), {
    title: 'Given',
    max_pages: '1',
  }).expect(200);
  expect(job.body).toMatchObject({ status: 'succeeded', credits_reserved: 1, output: { title: 'Given' } });
});

it('fails encrypted, broken, image-only and too long PDFs with their codes, charging nothing', async () => {
  suite.worker = await startTestWorker(suite.t);
  const six = Array.from({ length: 6 }, (_, i) => [{ text: `Page ${i + 1}` }]);
  for (const [pdf, code] of [
    [makePdf([[{ text: 'Secret' }]], { encrypted: true }), 'pdf_encrypted'],
    [brokenPdf(), 'pdf_unreadable'],
    [makePdf(['no-text']), 'pdf_no_text'],
    [makePdf(six), 'pdf_too_many_pages'],
  ] as const) {
    const job = await upload(pdf).expect(200);
    expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code } });
    expect((await ledgerFor(suite.t, job.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(existsSync(localFile(suite.t, job.body.input.file_key))).toBe(false);
  }
});

it('refuses a file too large, not a PDF, bad fields, and callers without access', async () => {
  const { t, a, b } = suite;
  const big = makePdf([[{ text: 'x'.repeat(200) }]]);
  await upload(Buffer.concat([big, Buffer.alloc(100_001)])).expect(413);
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  await upload(png).expect(415);
  await request(t.app).post(`/${a.site.slug}/posts/from-pdf`).set(a.editor.auth).send({ file: 'x' }).expect(415);
  await upload(big, { max_pages: '6' }).expect(422);
  await upload(big, { locale: 'xx' }).expect(422);
  await upload(big, { colour: 'red' }).expect(422);
  await request(t.app).post(`/${a.site.slug}/posts/from-pdf`).attach('file', big, 'a.pdf').expect(401);
  await upload(big, {}, b.admin.auth).expect(404);
  const reader = await serviceAccount(t, a.tenant, ['content:read', 'jobs:write']);
  await upload(big, {}, reader.auth).expect(403);
});
