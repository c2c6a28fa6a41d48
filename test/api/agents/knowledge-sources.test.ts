// POST /api/agents/{agent_id}/knowledge-base/from-url and from-pdf: a page
// served on 127.0.0.1 (the worker may reach loopback: FETCH_ALLOW_LOOPBACK)
// and a PDF made by the test (test/helpers/pdf.ts) become documents whose
// text the rag_index job takes with the post importers' code, then indexes;
// failures are on the job and the document; who may, and what is refused
// (413, 415, 422) before anything is kept.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { serviceAccount } from '../../helpers/factories.ts';
import type { Auth } from '../../helpers/identity.ts';
import { jobsSuite, ledgerFor, localFile, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { agentRow } from '../../helpers/agents.ts';
import { articlePage, paragraph, startPageServer, type PageServer } from '../../helpers/pages.ts';
import { brokenPdf, makePdf } from '../../helpers/pdf.ts';

const loopback = { FETCH_ALLOW_LOOPBACK: 'true' };
const suite = jobsSuite({ PDF_MAX_BYTES: '100000', PDF_MAX_PAGES: '5' });
let pages: PageServer;
let agent: string;

beforeAll(async () => {
  pages = await startPageServer();
  agent = await agentRow(suite.t, [suite.a.tenant]);
});
afterAll(() => pages.close());

const fromUrl = (body: Record<string, unknown>, auth: Auth = suite.a.admin.auth, agentId = agent) =>
  request(suite.t.app)
    .post(`/api/agents/${agentId}/knowledge-base/from-url`)
    .set(auth)
    .set('Prefer', 'wait=20')
    .send(body);

const fromPdf = (file: Buffer, fields: Record<string, string> = {}, auth: Auth = suite.a.admin.auth, site = 'a') => {
  const slug = site === 'a' ? suite.a.site.slug : site;
  let call = request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/from-pdf?site_identifier=${slug}`)
    .set(auth)
    .set('Prefer', 'wait=20')
    .attach('file', file, 'report.pdf');
  for (const [name, value] of Object.entries(fields)) call = call.field(name, value);
  return call;
};

const documentOf = async (id: string) =>
  (await request(suite.t.app).get(`/api/agents/${agent}/knowledge-base/${id}`).set(suite.a.admin.auth).expect(200))
    .body;

const search = (body: Record<string, unknown>) =>
  request(suite.t.app)
    .post(`/api/agents/${agent}/knowledge-base/search`)
    .set(suite.a.admin.auth)
    .send(body)
    .expect(200);

/** Files stored for the site (uploads waiting for their job, or left behind). */
const storedForSite = () => {
  const dir = localFile(suite.t, path.join(suite.a.tenant.id, suite.a.site.id));
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).length : 0;
};

describe('from a web page', () => {
  it('fetches the page, keeps its article as the document’s text and indexes it', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    pages.pages.set('/guide/ferries', {
      body: articlePage({
        title: 'Winter Ferries',
        lang: 'en-GB',
        paragraphs: [paragraph('ferry timetable', 1), paragraph('harbour crossing', 2) + '<script>alert(1)</script>'],
      }),
    });
    pages.pages.set('/old/ferries', { redirect: '/guide/ferries' });
    const job = await fromUrl({ site_identifier: suite.a.site.slug, url: `${pages.url}/old/ferries` }).expect(200);
    expect(job.headers.location).toBe(`/${suite.a.site.slug}/jobs/${job.body.id}`);
    expect(job.body).toMatchObject({
      kind: 'rag_index',
      status: 'succeeded',
      credits_charged: 0,
      output: {
        changed: true,
        chunks: 1,
        source: {
          url: `${pages.url}/old/ferries`,
          final_url: `${pages.url}/guide/ferries`,
          locale: 'en',
          extracted: { title: 'Winter Ferries', lang: 'en-GB' },
        },
      },
    });
    const document = await documentOf(job.body.input.document_id);
    expect(document).toMatchObject({
      kind: 'url',
      title: 'Winter Ferries',
      locale: 'en',
      format: 'html',
      post: null,
      source: { url: `${pages.url}/guide/ferries`, file_name: null, text_pending: false },
      index: { state: 'completed', job_id: job.body.id, chunks: 1 },
    });
    expect(document.body).toContain('The harbour crossing is described here');
    expect(document.body).not.toContain('<script>');
    const found = await search({ query: 'harbour crossing', source_kind: 'url' });
    expect(found.body.items[0]).toMatchObject({ document: { id: document.id, kind: 'url', post_id: null } });
  });

  it('keeps the title and locale given', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    pages.pages.set('/guide/bridges', {
      body: articlePage({ title: 'Bridges', paragraphs: [paragraph('bridge', 1), paragraph('toll', 2)] }),
    });
    const job = await fromUrl({
      site_identifier: suite.a.site.id,
      url: `${pages.url}/guide/bridges`,
      title: 'Crossing the river',
      locale: 'de',
    }).expect(200);
    expect(await documentOf(job.body.input.document_id)).toMatchObject({ title: 'Crossing the river', locale: 'de' });
  });

  it('fails a page that is not there, saying so on the job and the document, and keeps waiting for its text', async () => {
    suite.worker = await startTestWorker(suite.t, loopback);
    const job = await fromUrl({ site_identifier: suite.a.site.slug, url: `${pages.url}/gone` }).expect(200);
    expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'page_not_found' } });
    expect(await documentOf(job.body.input.document_id)).toMatchObject({
      title: `${pages.url}/gone`,
      body: '',
      source: { text_pending: true },
      index: { state: 'error', error: { code: 'page_not_found' }, chunks: 0 },
    });
  });

  it('refuses bad bodies, callers who may not, and tenants the agent does not serve', async () => {
    const { t, a, b } = suite;
    const url = `${pages.url}/guide/ferries`;
    await fromUrl({ site_identifier: a.site.slug, url: 'ftp://example.com/x' }).expect(422);
    await fromUrl({ site_identifier: a.site.slug, url, locale: 'EN_gb' }).expect(422);
    await fromUrl({ site_identifier: a.site.slug, url, colour: 'red' }).expect(422);
    await fromUrl({ url }).expect(422);
    await request(t.app).post(`/api/agents/${agent}/knowledge-base/from-url`).send({ url }).expect(401);
    await fromUrl({ site_identifier: a.site.slug, url }, a.editor.auth).expect(403);
    const reader = await serviceAccount(t, a.tenant, ['content:read', 'jobs:write']);
    await fromUrl({ site_identifier: a.site.slug, url }, reader.auth).expect(403);
    await fromUrl({ site_identifier: a.site.slug, url }, b.admin.auth).expect(404);
    await fromUrl({ site_identifier: b.site.slug, url }, a.admin.auth).expect(404);
    await fromUrl({ site_identifier: a.site.slug, url }, suite.admin.auth, await agentRow(t, [b.tenant])).expect(409);
  });
});

describe('from a PDF', () => {
  it('reads the PDF, keeps its text as the document’s, indexes it and removes the upload', async () => {
    suite.worker = await startTestWorker(suite.t);
    const pdf = makePdf([
      [
        { text: 'Annual Report', size: 24 },
        { text: 'This year the harbour saw more ships than ever before.' },
        { text: 'Outlook', size: 18 },
        { text: 'Next year we expect calmer seas & fewer storms.' },
      ],
      [{ text: 'The second page ends the report.' }],
    ]);
    const job = await fromPdf(pdf).expect(200);
    expect(job.body).toMatchObject({
      kind: 'rag_index',
      status: 'succeeded',
      input: { max_pages: 5 },
      output: { changed: true, chunks: 1, source: { file_name: 'report.pdf', pages: 2, title: 'Annual Report' } },
    });
    expect(existsSync(localFile(suite.t, job.body.input.file_key))).toBe(false);
    const document = await documentOf(job.body.input.document_id);
    expect(document).toMatchObject({
      kind: 'pdf',
      title: 'Annual Report',
      locale: suite.a.site.default_locale,
      source: { url: null, file_name: 'report.pdf', text_pending: false },
      index: { state: 'completed', chunks: 1 },
    });
    expect(document.body).toBe(
      '<p>This year the harbour saw more ships than ever before.</p>\n<h2>Outlook</h2>\n' +
        '<p>Next year we expect calmer seas &amp; fewer storms.</p>\n<p>The second page ends the report.</p>',
    );
    const found = await search({ query: 'calmer seas', source_kind: 'pdf' });
    expect(found.body.items[0].document).toMatchObject({ id: document.id, kind: 'pdf' });
  });

  it('takes the title given, and fails unreadable PDFs with their codes, removing the upload', async () => {
    suite.worker = await startTestWorker(suite.t);
    const titled = await fromPdf(makePdf([[{ text: 'Just one line of text here.' }]]), {
      title: 'Given',
      max_pages: '1',
    }).expect(200);
    expect(await documentOf(titled.body.input.document_id)).toMatchObject({
      title: 'Given',
      source: { file_name: 'report.pdf' },
    });
    for (const [pdf, code] of [
      [makePdf([[{ text: 'Secret' }]], { encrypted: true }), 'pdf_encrypted'],
      [brokenPdf(), 'pdf_unreadable'],
      [makePdf(['no-text']), 'pdf_no_text'],
    ] as const) {
      const job = await fromPdf(pdf).expect(200);
      expect(job.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code } });
      expect(await ledgerFor(suite.t, job.body.id)).toEqual([]);
      expect(existsSync(localFile(suite.t, job.body.input.file_key))).toBe(false);
      expect((await documentOf(job.body.input.document_id)).index).toMatchObject({ state: 'error', error: { code } });
    }
  });

  it('removes the upload when the document goes before its job reads it', async () => {
    const submitted = await fromPdf(makePdf([[{ text: 'Soon gone.' }]]))
      .set('Prefer', 'wait=0')
      .expect(202);
    const { document_id: id, file_key: key } = submitted.body.input;
    expect(existsSync(localFile(suite.t, key))).toBe(true);
    await request(suite.t.app).delete(`/api/agents/${agent}/knowledge-base/${id}`).set(suite.a.admin.auth).expect(204);
    suite.worker = await startTestWorker(suite.t);
    const job = await waitForJob(suite.t, submitted.body.id, ['succeeded', 'failed']);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'document_missing' } });
    expect(existsSync(localFile(suite.t, key))).toBe(false);
  });

  it('refuses a file too large, not a PDF, bad fields and callers who may not, keeping nothing', async () => {
    const { t, a, b } = suite;
    const before = storedForSite();
    const big = makePdf([[{ text: 'x'.repeat(200) }]]);
    await fromPdf(Buffer.concat([big, Buffer.alloc(100_001)])).expect(413);
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    await fromPdf(png).expect(415);
    await request(t.app)
      .post(`/api/agents/${agent}/knowledge-base/from-pdf?site_identifier=${a.site.slug}`)
      .set(a.admin.auth)
      .send({ file: 'x' })
      .expect(415);
    await fromPdf(big, { max_pages: '6' }).expect(422);
    await fromPdf(big, { locale: 'EN_gb' }).expect(422);
    await fromPdf(big, { colour: 'red' }).expect(422);
    await request(t.app)
      .post(`/api/agents/${agent}/knowledge-base/from-pdf`)
      .set(a.admin.auth)
      .attach('file', big, 'a.pdf')
      .expect(422);
    await request(t.app)
      .post(`/api/agents/${agent}/knowledge-base/from-pdf?site_identifier=${a.site.slug}`)
      .set(a.admin.auth)
      .field('title', 'No file')
      .expect(422);
    await request(t.app)
      .post(`/api/agents/${agent}/knowledge-base/from-pdf?site_identifier=${a.site.slug}`)
      .attach('file', big, 'a.pdf')
      .expect(401);
    await fromPdf(big, {}, a.editor.auth).expect(403);
    await fromPdf(big, {}, b.admin.auth).expect(404);
    await fromPdf(big, {}, a.admin.auth, b.site.slug).expect(404);
    expect(storedForSite()).toBe(before);
  });
});
