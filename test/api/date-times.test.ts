// Date-times a client sends with any offset RFC 3339 allows (up to ±23:59),
// though PostgreSQL's timestamptz takes offsets only up to ±15:59: the shared
// schema (core/timestamp.ts instant) turns them into UTC before a query sees
// them, on query parameters, in bodies and in the MCP tools alike.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { createElement, createType, mediaRow } from '../helpers/content.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../helpers/identity.ts';
import type { Caller } from '../helpers/factories.ts';

let t: TestApp;
let a: Staffed;
let admin: Caller;
let server: http.Server;
let client: Client;
let image: string;
beforeAll(async () => {
  t = await startTestApp();
  a = await staffedTenant(t);
  admin = await globalAdmin(t);
  image = await mediaRow(t, a.site);
  // Made at a known instant: 2026-01-01T12:00:00Z.
  await t.services.db.query(
    sql.typeAlias('void')`update media_items set created_at = '2026-01-01T12:00:00Z' where id = ${image}`,
  );
  server = http.createServer(t.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  client = new Client({ name: 'date-times-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: a.editor.auth } }));
});
afterAll(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await stopTestApp(t);
});

const listed = (query: string) =>
  request(t.app)
    .get(`/${a.site.slug}/media/?${query}`)
    .set(a.editor.auth)
    .expect(200)
    .then((res) => res.body.items.map((item: { id: string }) => item.id));

describe('a date-time query parameter', () => {
  // 2026-01-01T00:00:00-19:00 is 2026-01-01T19:00:00Z, after the item; +19:00 is 2025-12-31T05:00:00Z, before it.
  it('takes offsets past ±15:59 as the instant they name', async () => {
    expect(await listed(`created_after=${encodeURIComponent('2026-01-01T00:00:00-19:00')}`)).toEqual([]);
    expect(await listed(`created_after=${encodeURIComponent('2026-01-01T00:00:00+19:00')}`)).toEqual([image]);
    expect(await listed(`created_before=${encodeURIComponent('2026-01-01T00:00:00-23:59')}`)).toEqual([image]);
    expect(await listed(`created_before=${encodeURIComponent('2026-01-02T00:00:00.123456+23:59')}`)).toEqual([]);
  });

  it('keeps the fraction of a second', async () => {
    // 12:00:00.000001 UTC given as 2026-01-02T06:00:00.000001+18:00: one microsecond after the item.
    expect(await listed(`created_after=${encodeURIComponent('2026-01-02T06:00:00.000001+18:00')}`)).toEqual([]);
    expect(await listed(`created_after=${encodeURIComponent('2026-01-02T05:59:59.999999+18:00')}`)).toEqual([image]);
  });

  it.each([
    ['0001-01-01T00:00:00+23:59', 'the year 0000 in UTC'],
    ['9999-12-31T23:59:59-23:59', 'the year 10000 in UTC'],
  ])('refuses %s (%s) with 422', async (value) => {
    const res = await request(t.app)
      .get(`/${a.site.slug}/media/?created_after=${encodeURIComponent(value)}`)
      .set(a.editor.auth)
      .expect(422);
    expect(res.body.errors[0]).toMatchObject({ path: 'query.created_after' });
  });

  it('takes the first and last instants of the years 0001 to 9999 in UTC', async () => {
    expect(await listed(`created_after=${encodeURIComponent('0001-01-01T16:00:00+16:00')}`)).toEqual([image]);
    expect(await listed(`created_before=${encodeURIComponent('9999-12-31T07:59:59.999-16:00')}`)).toEqual([image]);
  });
});

describe('a date-time in a body', () => {
  it('schedules a post at an offset past ±15:59, stored in UTC', async () => {
    const res = await request(t.app)
      .post(`/${a.site.slug}/posts/`)
      .set(a.editor.auth)
      .send({ title: 'Far east', status: 'scheduled', scheduled_for: '2099-06-01T00:00:00+20:00' })
      .expect(201);
    expect(Date.parse(res.body.scheduled_for)).toBe(Date.parse('2099-05-31T04:00:00Z'));
  });

  it('lets a grant expire at an offset past ±15:59', async () => {
    await request(t.app)
      .post('/admin/global-cost-settings/tenant-credits/allocate')
      .set(admin.auth)
      .send({ tenant_id: a.tenant.id, amount: 5, expires_at: '2099-01-01T00:00:00-19:00' })
      .expect(201);
    const expires = await t.services.db.oneFirst(sql.type(z.object({ expires_at: z.string() }))`
      select expires_at from credit_lots l join credit_accounts c on c.id = l.account_id
      where c.tenant_id = ${a.tenant.id} and c.site_id is null`);
    expect(Date.parse(expires)).toBe(Date.parse('2099-01-01T19:00:00Z'));
  });
});

describe('a content field of type datetime', () => {
  const list = (site: string, op: string, value: string) =>
    request(t.app)
      .get(`/${site}/elements/?type=event&filter[starts][${op}]=${encodeURIComponent(value)}`)
      .set(a.editor.auth)
      .then((res) => ({
        status: res.status,
        names: (res.body.items ?? []).map((item: { name: string }) => item.name),
      }));

  it('keeps the offset it was written with, and filters by the instant, at offsets past ±15:59', async () => {
    const site =
      (await createType(t, a.admin.auth, a.site, {
        api_id: 'event',
        fields: [{ id: 'starts', label: 'Starts', type: 'datetime' }],
      })) && a.site.slug;
    const east = await createElement(t, a.editor.auth, a.site, {
      type: 'event',
      name: 'East',
      data: { starts: '2026-01-02T06:00:00+19:00' },
    });
    expect(east.data).toEqual({ starts: '2026-01-02T06:00:00+19:00' });
    await createElement(t, a.editor.auth, a.site, {
      type: 'event',
      name: 'Utc',
      data: { starts: '2026-01-01T12:00:00Z' },
    });
    // East starts at 2026-01-01T11:00:00Z, an hour before Utc.
    expect(await list(site, 'lt', '2026-01-01T11:30:00Z')).toEqual({
      status: 200,
      names: ['East'],
    });
    expect(await list(site, 'gt', '2026-01-01T00:00:00-11:45')).toEqual({
      status: 200,
      names: ['Utc'],
    });
  });

  it('refuses a value outside the years 0001 to 9999 in UTC, written or filtered by, with 422', async () => {
    const refused = await request(t.app)
      .post(`/${a.site.slug}/elements/`)
      .set(a.editor.auth)
      .send({ type: 'event', name: 'Too early', data: { starts: '0001-01-01T00:00:00+23:59' } })
      .expect(422);
    expect(refused.body.errors[0].path).toBe('body.data.starts');
    expect((await list(a.site.slug, 'gte', '0000-06-01T00:00:00Z')).status).toBe(422);
  });
});

describe('the MCP tool list_media', () => {
  const call = (args: Record<string, unknown>) =>
    client.callTool({
      name: 'list_media',
      arguments: { site_identifier: a.site.slug, ...args },
    }) as Promise<CallToolResult>;

  it('takes offsets past ±15:59 as the instant they name', async () => {
    const before = await call({ created_after: '2026-01-01T00:00:00+19:00' });
    expect(before.isError ?? false).toBe(false);
    expect((before.structuredContent as { items: { id: string }[] }).items.map((item) => item.id)).toEqual([image]);
    const after = await call({ created_after: '2026-01-01T00:00:00-19:00' });
    expect((after.structuredContent as { items: unknown[] }).items).toEqual([]);
  });

  it('refuses an instant outside the years 0001 to 9999 in UTC as a 422 problem', async () => {
    const refused = await call({ created_after: '0001-01-01T00:00:00+23:59' });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content[0] as { text: string }).text)).toMatchObject({ status: 422 });
  });
});
