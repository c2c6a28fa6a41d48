// The MCP server's resources, driven by the SDK's own client: a site's posts,
// pages and media items at cms://{site}/posts|pages|media/{id}, listed in
// cursor pages over what the caller may read and read as their REST
// endpoints answer them, with those endpoints' access: what GET refuses, the
// resource refuses too, as a JSON-RPC error carrying the same problem.
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import request from 'supertest';
import { resourcesPerPage } from '../../../api/mcp/resource-list.ts';
import { newAgent } from '../../helpers/agents.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Auth, type Staffed } from '../../helpers/identity.ts';
import { closeMcpClients, connectMcp, listen, refusal, type Listening } from '../../helpers/mcp.ts';
import type { Site } from '../../../core/tenancy/sites.ts';

let t: TestApp;
let server: Listening;
let a: Staffed;
let b: Staffed;
let admin: Caller;
const content: Record<'post' | 'page' | 'media', string> = { post: '', page: '', media: '' };
let bPost: string;

// A 1×1 PNG, the smallest real image.
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const newPost = async (site: Site, auth: Auth, title: string) =>
  (
    await request(t.app)
      .post(`/${site.slug}/posts/`)
      .set(auth)
      .send({ title, body: `# ${title}` })
      .expect(201)
  ).body.id as string;

beforeAll(async () => {
  t = await startTestApp();
  server = await listen(t.app);
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  admin = await globalAdmin(t);
  content.post = await newPost(a.site, a.editor.auth, 'Harbour lights');
  content.page = (
    await request(t.app)
      .post(`/${a.site.slug}/pages/`)
      .set(a.editor.auth)
      .send({ slug: 'about', title: 'About us' })
      .expect(201)
  ).body.id;
  content.media = (
    await request(t.app).post(`/${a.site.slug}/media/`).set(a.editor.auth).attach('file', png, 'dot.png').expect(201)
  ).body.id;
  bPost = await newPost(b.site, b.editor.auth, 'Another tenant’s post');
});
afterAll(async () => {
  await closeMcpClients();
  await server?.close();
  await stopTestApp(t);
});

const connect = async (auth: Auth, agentId?: string) =>
  (await connectMcp(server.url, auth, agentId ? { agentId } : {})).client;

const textOf = (result: { contents: unknown[] }) => JSON.parse((result.contents[0] as { text: string }).text);

/** Every resource the client may list, page by page. */
async function walk(client: Client): Promise<{ uris: string[]; pages: number[] }> {
  const uris: string[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    uris.push(...page.resources.map((resource) => resource.uri));
    pages.push(page.resources.length);
    cursor = page.nextCursor;
  } while (cursor);
  return { uris, pages };
}

describe('resources/templates/list', () => {
  it('offers posts, pages and media by site and id', async () => {
    const client = await connect(a.editor.auth);
    expect(client.getServerCapabilities()).toMatchObject({ resources: {} });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
      'cms://{site}/posts/{post_id}',
      'cms://{site}/pages/{page_id}',
      'cms://{site}/media/{media_id}',
    ]);
    expect(resourceTemplates.every((template) => template.mimeType === 'application/json')).toBe(true);
  });
});

describe('resources/read', () => {
  it('answers a post and a page as their REST endpoints do, by the site’s slug or id', async () => {
    const client = await connect(a.editor.auth);
    const post = await client.readResource({ uri: `cms://${a.site.slug}/posts/${content.post}` });
    expect(post.contents[0]).toMatchObject({
      uri: `cms://${a.site.slug}/posts/${content.post}`,
      mimeType: 'application/json',
    });
    const rest = await request(t.app).get(`/${a.site.slug}/posts/${content.post}`).set(a.editor.auth).expect(200);
    expect(textOf(post)).toEqual(rest.body);
    const page = await client.readResource({ uri: `cms://${a.site.id}/pages/${content.page}` });
    const restPage = await request(t.app).get(`/${a.site.id}/pages/${content.page}`).set(a.editor.auth).expect(200);
    expect(textOf(page)).toEqual(restPage.body);
    expect(textOf(page)).toMatchObject({ title: 'About us', elements: [] });
  });

  it('answers a media item’s metadata and a link to its file, not the file', async () => {
    const client = await connect(a.editor.auth);
    const read = await client.readResource({ uri: `cms://${a.site.slug}/media/${content.media}` });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).not.toHaveProperty('blob');
    const item = textOf(read);
    // Read over the same server, so that the REST answer's URLs name the same host as the resource's.
    const rest = await request(server.url.origin)
      .get(`/${a.site.slug}/media/${content.media}`)
      .set(a.editor.auth)
      .expect(200);
    const { file_url: fileUrl, ...metadata } = item;
    expect(metadata).toEqual(rest.body);
    expect(fileUrl).toBe(`${server.url.origin}/${a.site.slug}/media/${content.media}/view`);
    const file = await fetch(fileUrl, { headers: a.editor.auth });
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(png);
    // Its `url`, as the REST answer's, gives the file with no token.
    expect(metadata.url).toMatch(
      new RegExp(`^${server.url.origin}/${a.site.id}/media/${content.media}/signed-view\\?`),
    );
    const signed = await fetch(metadata.url);
    expect(signed.status).toBe(200);
    expect(Buffer.from(await signed.arrayBuffer())).toEqual(png);
  });

  it('does not find another tenant’s items, by its site or under the caller’s own', async () => {
    const client = await connect(a.editor.auth);
    const theirs = await refusal(client.readResource({ uri: `cms://${b.site.slug}/posts/${bPost}` }));
    expect(theirs).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 404 } });
    const underMine = await refusal(client.readResource({ uri: `cms://${a.site.slug}/posts/${bPost}` }));
    expect(underMine).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 404 } });
  });

  it('refuses an author the post of a site they are not assigned to, as GET does', async () => {
    const other = await newSite(t, a.tenant);
    const hidden = await newPost(other, a.admin.auth, 'Only for the other site');
    const writer = await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] });
    await request(t.app).get(`/${other.slug}/posts/${hidden}`).set(writer.auth).expect(404);
    const client = await connect(writer.auth);
    const refused = await refusal(client.readResource({ uri: `cms://${other.slug}/posts/${hidden}` }));
    expect(refused).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 404 } });
    // Their own site's posts they read, whoever wrote them.
    await client.readResource({ uri: `cms://${a.site.slug}/posts/${content.post}` });
    // An author of the tenant assigned to no site reaches none of its sites.
    const unassigned = await connect(a.author.auth);
    const none = await refusal(unassigned.readResource({ uri: `cms://${a.site.slug}/posts/${content.post}` }));
    expect(none.problem.status).toBe(404);
  });

  it('refuses a service account the scope the endpoint needs', async () => {
    const bot = await serviceAccount(t, a.tenant, ['sites:read', 'content:read'], a.admin);
    const client = await connect(bot.auth);
    await client.readResource({ uri: `cms://${a.site.slug}/posts/${content.post}` });
    const refused = await refusal(client.readResource({ uri: `cms://${a.site.slug}/media/${content.media}` }));
    expect(refused).toMatchObject({ code: ErrorCode.InvalidRequest, problem: { status: 403 } });
    expect(refused.problem.detail).toContain('media:read');
  });

  it('reads only the sites of the tenants a session’s agent is assigned to', async () => {
    const agentId = (await newAgent(t, admin, { name: 'Reader', tools: ['get_page'] }, [a.tenant.id])).id;
    const client = await connect(admin.auth, agentId);
    await client.readResource({ uri: `cms://${a.site.slug}/pages/${content.page}` });
    const refused = await refusal(client.readResource({ uri: `cms://${b.site.slug}/posts/${bPost}` }));
    expect(refused.problem.status).toBe(404);
    const listed = await walk(client);
    expect(listed.uris).toContain(`cms://${a.site.slug}/posts/${content.post}`);
    expect(listed.uris.some((uri) => uri.startsWith(`cms://${b.site.slug}/`))).toBe(false);
  });

  it('answers a URI it does not serve, or a malformed id, with a JSON-RPC error', async () => {
    const client = await connect(a.editor.auth);
    for (const uri of [
      'https://example.com/posts/1',
      `cms://${a.site.slug}/widgets/${content.post}`,
      `cms://${a.site.slug}/posts/${content.post}/extra`,
      'cms://%E0%A4%A/posts/x',
    ]) {
      const refused = await refusal(client.readResource({ uri }));
      expect(refused).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 404 } });
    }
    const malformed = await refusal(client.readResource({ uri: `cms://${a.site.slug}/posts/not-a-uuid` }));
    expect(malformed).toMatchObject({
      code: ErrorCode.InvalidParams,
      problem: { status: 422, errors: [{ path: 'uri.post_id' }] },
    });
    // A URI that is not text is refused by the protocol's own schema.
    const notText = await refusal(client.readResource({ uri: 7 } as unknown as { uri: string }));
    expect(notText).toMatchObject({ code: ErrorCode.InvalidParams, problem: { errors: [{ path: 'params.uri' }] } });
    // The server is still there.
    await client.readResource({ uri: `cms://${a.site.slug}/posts/${content.post}` });
  });
});

describe('resources/list', () => {
  it('lists what the caller may read, with names, titles and times', async () => {
    const client = await connect(a.editor.auth);
    const { resources } = await client.listResources();
    const byUri = Object.fromEntries(resources.map((resource) => [resource.uri, resource]));
    expect(byUri[`cms://${a.site.slug}/posts/${content.post}`]).toMatchObject({
      name: 'posts/en/harbour-lights',
      title: 'Harbour lights',
      mimeType: 'application/json',
      annotations: { lastModified: expect.any(String) },
    });
    expect(byUri[`cms://${a.site.slug}/pages/${content.page}`]).toMatchObject({ title: 'About us' });
    expect(byUri[`cms://${a.site.slug}/media/${content.media}`]).toMatchObject({ title: 'dot.png' });
    expect(resources.some((resource) => resource.uri.includes(bPost))).toBe(false);
    // An author of the tenant assigned to no site lists nothing of it.
    const unassigned = await connect(a.author.auth);
    expect((await unassigned.listResources()).resources).toEqual([]);
  });

  it('passes over the kinds a service account may not read', async () => {
    const bot = await serviceAccount(t, a.tenant, ['sites:read', 'content:read'], a.admin);
    const { uris } = await walk(await connect(bot.auth));
    expect(uris).toContain(`cms://${a.site.slug}/posts/${content.post}`);
    expect(uris.some((uri) => uri.includes('/media/'))).toBe(false);
  });

  it('pages with cursors through every item, each once', async () => {
    const many = await staffedTenant(t);
    const posts: string[] = [];
    for (let start = 0; start < resourcesPerPage + 3; start += 10) {
      const batch = Array.from({ length: Math.min(10, resourcesPerPage + 3 - start) }, (_, i) =>
        newPost(many.site, many.editor.auth, `Post ${start + i}`),
      );
      posts.push(...(await Promise.all(batch)));
    }
    const page = (
      await request(t.app)
        .post(`/${many.site.slug}/pages/`)
        .set(many.editor.auth)
        .send({ slug: 'home', title: 'Home' })
        .expect(201)
    ).body.id;
    const { uris, pages } = await walk(await connect(many.editor.auth));
    expect(pages[0]).toBe(resourcesPerPage);
    expect(new Set(uris).size).toBe(uris.length);
    expect(uris.sort()).toEqual(
      [...posts.map((id) => `cms://${many.site.slug}/posts/${id}`), `cms://${many.site.slug}/pages/${page}`].sort(),
    );
    const bad = await refusal((await connect(many.editor.auth)).listResources({ cursor: 'not-a-cursor' }));
    expect(bad).toMatchObject({ code: ErrorCode.InvalidParams, problem: { status: 400 } });
  });
});
