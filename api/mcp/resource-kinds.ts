// What of a site the MCP server offers as resources: its posts, pages and
// media items, at cms://{site}/posts/{post_id}, cms://{site}/pages/{page_id}
// and cms://{site}/media/{media_id}. Each kind names the REST endpoint that
// reads one item: that route's declared access is the resource's (who may
// read it, with which scopes), and its domain function reads it, so a caller
// reads here exactly what GET /{site}/posts/{post_id} and the others answer
// them. `{site}` is the site's slug or id, as `{site_identifier}` is; listed
// resources name their site by slug.
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { getPageWithElements } from '../../core/content/page-elements.ts';
import { listPages, pageListQuery } from '../../core/content/pages.ts';
import { getMedia, listMedia, mediaListQuery } from '../../core/media/library.ts';
import { withFileUrl, type FileLinks } from '../../core/media/urls.ts';
import type { Page } from '../../core/pagination.ts';
import { getPost, listPosts, postListQuery } from '../../core/posts/posts.ts';
import type { SiteAccess } from '../../core/tenancy/site-access.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { routes as mediaRoutes } from '../media/router.ts';
import { routes as pageRoutes } from '../pages/router.ts';
import { routes as postRoutes } from '../posts/router.ts';
import type { RouteDefinition } from '../route.ts';

export const scheme = 'cms';

/** What the kind's items have in common, for listing them. */
type Listed = { id: string; updated_at: string };

export type ResourceKind = {
  /** The URI's segment, as the REST path's. */
  segment: 'posts' | 'pages' | 'media';
  /** The item's id in the URI template, as the REST path's parameter. */
  idName: 'post_id' | 'page_id' | 'media_id';
  /** The REST endpoint reading one item: its access is the resource's. */
  route: RouteDefinition;
  template: Omit<ResourceTemplate, 'uriTemplate' | 'mimeType'>;
  /** One item, as its endpoint answers it; `links` say where this API is reached and sign URLs, for links. */
  read(db: CommonQueryMethods, access: SiteAccess, id: string, links: FileLinks): Promise<object>;
  /** A page of the site's items, oldest first, as the kind's list endpoint walks them. */
  list(db: CommonQueryMethods, access: SiteAccess, limit: number, cursor: string | undefined): Promise<Page<Listed>>;
  /** The item's name (unique in the site), title and description in resources/list. */
  describe(item: Listed): { name: string; title: string; description: string };
};

const route = (routes: RouteDefinition[], key: string): RouteDefinition => {
  const found = routes.find((candidate) => candidate.key === key);
  if (!found) throw new Error(`No route ${key} to read resources as`);
  return found;
};

const posts: ResourceKind = {
  segment: 'posts',
  idName: 'post_id',
  route: route(postRoutes, 'GET /{site_identifier}/posts/{post_id}'),
  template: {
    name: 'post',
    title: 'A post',
    description: 'A post of the site, as GET /{site_identifier}/posts/{post_id} answers it (JSON).',
  },
  read: (db, access, id) => getPost(db, access, id),
  list: (db, access, limit, cursor) => listPosts(db, access, postListQuery.parse({ limit, cursor })),
  describe: (item) => {
    const post = item as Listed & { title: string; slug: string; status: string; locale: string };
    return {
      name: `posts/${post.locale}/${post.slug}`,
      title: post.title,
      description: `A ${post.status} post (${post.locale})`,
    };
  },
};

const pages: ResourceKind = {
  segment: 'pages',
  idName: 'page_id',
  route: route(pageRoutes, 'GET /{site_identifier}/pages/{page_id}'),
  template: {
    name: 'page',
    title: 'A page',
    description:
      'A page of the site with the elements placed on it, as GET /{site_identifier}/pages/{page_id} answers it (JSON).',
  },
  read: (db, access, id) => getPageWithElements(db, access, id),
  list: (db, access, limit, cursor) => listPages(db, access, pageListQuery.parse({ limit, cursor })),
  describe: (item) => {
    const page = item as Listed & { title: string; path: string; status: string; locale: string };
    return {
      name: `pages/${page.locale}${page.path}`,
      title: page.title,
      description: `A ${page.status} page (${page.locale})`,
    };
  },
};

const media: ResourceKind = {
  segment: 'media',
  idName: 'media_id',
  route: route(mediaRoutes, 'GET /{site_identifier}/media/{media_id}'),
  template: {
    name: 'media',
    title: 'A media item',
    description:
      'A media item’s metadata, as GET /{site_identifier}/media/{media_id} answers it (JSON: `url` fetches the file ' +
      'with no token), with `file_url`: GET /{site_identifier}/media/{media_id}/view, which serves the file to the same ' +
      'bearer token. The file itself is not sent.',
  },
  read: async (db, access, id, links) => {
    const item = withFileUrl(links, access.site, await getMedia(db, access, id));
    return { ...item, file_url: `${links.base}/${access.site.slug}/media/${item.id}/view` };
  },
  list: (db, access, limit, cursor) => listMedia(db, access, mediaListQuery.parse({ limit, cursor })),
  describe: (item) => {
    const file = item as Listed & { title: string; file_name: string; kind: string; mime_type: string };
    return {
      name: `media/${file.id}/${file.file_name}`,
      title: file.title || file.file_name,
      description: `A media item: ${file.kind}, ${file.mime_type}`,
    };
  },
};

/** The kinds, in the order resources/list walks a site. */
export const resourceKinds: readonly ResourceKind[] = [posts, pages, media];

const bySegment = new Map(resourceKinds.map((kind) => [kind.segment, kind]));

export const uriOf = (kind: ResourceKind, site: string, id: string) => `${scheme}://${site}/${kind.segment}/${id}`;

const decoded = (part: string): string | null => {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
};

/**
 * The kind a URI names, and its parts as the REST path's parameters (to be
 * checked by that route's own schema); null for a URI that is not a resource
 * of this server.
 */
export function parseUri(uri: string): { kind: ResourceKind; params: Record<string, string> } | null {
  const parts = /^cms:\/\/([^/?#]+)\/([a-z]+)\/([^/?#]+)$/.exec(uri);
  const kind = parts && bySegment.get(parts[2] as ResourceKind['segment']);
  const site = parts && decoded(parts[1]!);
  const id = parts && decoded(parts[3]!);
  if (!kind || site === null || id === null) return null;
  return { kind, params: { site_identifier: site, [kind.idName]: id } };
}

export const templateOf = (kind: ResourceKind): ResourceTemplate => ({
  ...kind.template,
  uriTemplate: `${scheme}://{site}/${kind.segment}/{${kind.idName}}`,
  mimeType: 'application/json',
});

/** An item as resources/list shows it. */
export const listing = (kind: ResourceKind, site: Site, item: Listed): Resource => ({
  uri: uriOf(kind, site.slug, item.id),
  ...kind.describe(item),
  mimeType: 'application/json',
  annotations: { lastModified: item.updated_at },
});
