// The cast and small factories of the content tests: tenants A and B with
// their staff, authors on A's site, service accounts reading and writing
// content, and content types and elements made through HTTP.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { TestApp } from './app.ts';
import { areaCast, unique, type AreaCast, type Auth } from './identity.ts';

export type ContentCast = AreaCast;

export const contentCast = (t: TestApp): Promise<ContentCast> => areaCast(t, 'content');

export type TypeBody = { name?: string; api_id?: string; description?: string; fields?: unknown[] };
export type ContentTypeRow = { id: string; site_id: string; api_id: string; version: number; fields: unknown[] };

/** A content type made through HTTP (201 expected). */
export async function createType(t: TestApp, auth: Auth, site: Site, body: TypeBody = {}): Promise<ContentTypeRow> {
  const apiId = body.api_id ?? `type_${unique()}`;
  const res = await request(t.app)
    .post(`/${site.slug}/contenttypes/`)
    .set(auth)
    .send({ name: body.name ?? `Type ${apiId}`, api_id: apiId, fields: [], ...body });
  if (res.status !== 201) throw new Error(`create type: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as ContentTypeRow;
}

export type ElementRow = {
  id: string;
  type_id: string;
  name: string;
  locale: string;
  status: string;
  data: Record<string, unknown>;
  version: number;
  schema_version: number;
};

/** An element made through HTTP (201 expected). */
export async function createElement(
  t: TestApp,
  auth: Auth,
  site: Site,
  body: Record<string, unknown>,
): Promise<ElementRow> {
  const res = await request(t.app)
    .post(`/${site.slug}/elements/`)
    .set(auth)
    .send({ name: `Element ${unique()}`, ...body });
  if (res.status !== 201) throw new Error(`create element: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as ElementRow;
}

/** The paths of a 422's errors (or a validation report's), for comparing what was found. */
export const pathsOf = (body: { errors?: { path: string }[] }) => (body.errors ?? []).map((error) => error.path).sort();

/** A ready media item row of the site (no file: content only refers to it). */
export async function mediaRow(t: TestApp, site: Site, kind: 'image' | 'video' | 'audio' | 'document' = 'image') {
  return t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
    values (${site.tenant_id}, ${site.id}, ${kind}, 'image/png', ${`${site.tenant_id}/${site.id}/${unique()}.png`}, 'ready')
    returning id`);
}

/** Gives the site these locales, the first its default. */
export async function withLocales(t: TestApp, site: Site, locales: string[]): Promise<Site> {
  await t.services.db.query(sql.typeAlias('void')`
    update sites set locales = ${sql.array(locales, 'text')}, default_locale = ${locales[0]!} where id = ${site.id}`);
  return { ...site, locales, default_locale: locales[0]! };
}
