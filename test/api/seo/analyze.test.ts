// SEO analysis through HTTP: findings with where they are, the keyword's
// places and density, readability by language, images without alt, heading
// order, a post reviewed by id; and who may ask.
import request from 'supertest';
import { readability } from '../../../core/seo/readability.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { contentCast, pathsOf, withLocales, type ContentCast } from '../../helpers/content.ts';

let t: TestApp;
let c: ContentCast;
let site: Site;

type Finding = { severity: string; code: string; where: string };

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  site = await withLocales(t, c.a.site, ['en', 'de']);
});
afterAll(() => stopTestApp(t));

const analyze = (body: Record<string, unknown>) =>
  request(t.app).post(`/${site.slug}/seo/analyze`).set(c.reader).send(body);
const codes = (findings: Finding[]) => findings.map((finding) => finding.code);

const sentence = 'Good coffee starts with fresh beans and clean water every single morning.';
const longText = Array.from({ length: 30 }, () => sentence).join(' ');

describe('SEO analysis', () => {
  it('finds every problem of a poor text, each with where it is, and scores it low', async () => {
    const res = await analyze({
      title: 'Coffee',
      slug: 'My_Post',
      keyword: 'cold brew',
      body: '<h1>One</h1><h1>Two</h1><h4>Deep</h4><p>First words.</p><img src="a.png"><img src="b.png" alt="ok">',
    }).expect(200);
    const found = res.body.findings as Finding[];
    expect(codes(found)).toEqual(
      expect.arrayContaining([
        'title_too_short',
        'description_missing',
        'several_h1',
        'heading_skipped',
        'keyword_not_in_title',
        'keyword_not_in_slug',
        'keyword_not_in_first_paragraph',
        'keyword_missing',
        'thin_content',
        'no_links',
        'image_without_alt',
        'slug_not_clean',
      ]),
    );
    expect(found.find((finding) => finding.code === 'image_without_alt')).toMatchObject({ where: 'body.img[1]' });
    expect(found.find((finding) => finding.code === 'heading_skipped')).toMatchObject({ where: 'body.h4[1]' });
    expect(res.body.score).toBeLessThan(40);
    expect(res.body.metrics).toMatchObject({ images: 2, images_without_alt: 1, keyword_occurrences: 0 });
  });

  it('passes a good text, measuring the keyword where it counts', async () => {
    const body =
      `# Cold brew coffee at home\n\nCold brew is coffee made slowly. ${longText}\n\n` +
      `## Why cold brew tastes smooth\n\n${longText} Cold brew keeps. See [our guide](/guides/brew) and ` +
      `[a study](https://example.org/study).\n\n![Jar of cold brew](jar.png)`;
    const res = await analyze({
      title: 'Cold brew coffee at home: a simple guide for mornings',
      description:
        'How to make cold brew coffee at home with fresh beans, clean water and a jar, and why it tastes smooth and sweet.',
      slug: 'cold-brew-coffee-at-home',
      keyword: 'cold brew',
      body,
      body_format: 'markdown',
    }).expect(200);
    expect(codes(res.body.findings).filter((code: string) => code !== 'keyword_density_low')).toEqual([]);
    expect(res.body.metrics.keyword_occurrences).toBe(4);
    expect(res.body.metrics.links).toEqual({ internal: 1, external: 1 });
    expect(res.body.metrics.headings).toEqual([
      { level: 1, text: 'Cold brew coffee at home' },
      { level: 2, text: 'Why cold brew tastes smooth' },
    ]);
    expect(res.body.metrics.readability).toMatchObject({ method: 'flesch', level: 'easy' });
    expect(res.body.score).toBeGreaterThanOrEqual(94);
  });

  it('reads a word marked up inside a heading as one word', async () => {
    const res = await analyze({ title: 'Brew', body: '<h2>Cold<em>brew</em> guide</h2><p>Text.</p>' }).expect(200);
    expect(res.body.metrics.headings).toEqual([{ level: 2, text: 'Coldbrew guide' }]);
    expect(res.body.metrics.words).toBe(3);
  });

  it('flags a keyword stuffed into the text', async () => {
    const res = await analyze({
      title: 'Beans',
      keyword: 'beans',
      body: `<p>${'beans beans coffee '.repeat(200)}</p>`,
    });
    expect(codes(res.body.findings)).toContain('keyword_stuffing');
    expect(res.body.metrics.keyword_density).toBeGreaterThan(3);
  });

  it('measures readability by language: Flesch, Amstad, LIX', () => {
    expect(readability('The cat sat on the mat. It was warm.', 'en')).toMatchObject({
      method: 'flesch',
      level: 'easy',
    });
    expect(
      readability(
        'Die Verwaltungsgerichtsbarkeitsordnungsbestimmungen erfordern umfangreiche Dokumentationsverpflichtungen sämtlicher Beteiligter.',
        'de-CH',
      ),
    ).toMatchObject({ method: 'amstad', level: 'difficult' });
    const french = readability('Le chat dort. Il fait beau.', 'fr');
    expect(french).toMatchObject({ method: 'lix', level: 'easy', words: 6, sentences: 2 });
  });

  it('reviews a post by id, its seo fields first; another tenant’s post is a 404', async () => {
    const post = await request(t.app)
      .post(`/${site.slug}/posts/`)
      .set(c.a.editor.auth)
      .send({
        title: 'Espresso',
        slug: 'espresso',
        body: '<p>Espresso is short.</p>',
        seo: { title: 'Espresso: the short coffee, explained for beginners', description: 'Short.' },
      })
      .expect(201);
    const res = await analyze({ post_id: post.body.id, keyword: 'espresso' }).expect(200);
    expect(res.body.metrics).toMatchObject({ title_length: 51, description_length: 6, keyword_occurrences: 1 });
    expect(codes(res.body.findings)).toContain('description_too_short');
    expect(codes(res.body.findings)).not.toContain('keyword_not_in_slug');
    await request(t.app)
      .post(`/${c.b.site.slug}/seo/analyze`)
      .set(c.b.admin.auth)
      .send({ post_id: post.body.id })
      .expect(404);
  });

  it('answers 401 without a token, 403 without content:read, 404 for another tenant’s site, 422 for a bad body', async () => {
    await request(t.app).post(`/${site.slug}/seo/analyze`).send({ title: 'X' }).expect(401);
    await request(t.app).post(`/${site.slug}/seo/analyze`).set(c.noScope).send({ title: 'X' }).expect(403);
    await request(t.app).post(`/${site.slug}/seo/analyze`).set(c.b.admin.auth).send({ title: 'X' }).expect(404);
    const bad = await analyze({ body_format: 'rtf', keyword: '', extra: 1 }).expect(422);
    expect(pathsOf(bad.body)).toEqual(expect.arrayContaining(['body.body_format', 'body.keyword']));
    expect(pathsOf((await analyze({ body: 'text only' }).expect(422)).body)).toEqual(['body.title']);
  });
});
