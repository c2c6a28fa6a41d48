// Drafts and history of elements and pages: the same eight routes for each
// kind (keys written out by each router), over core/content/element-drafts.ts
// and page-drafts.ts. Anyone who reaches the site reads drafts and versions
// (content:read); publishing, discarding and restoring are changes of the
// element or page, allowed as its PATCH is (content:write; authors only what
// they made).
import { z } from 'zod';
import {
  comparisonSchema,
  versionListQuery,
  versionSchema,
  versionSummarySchema,
} from '../core/content/content-versions.ts';
import {
  compareElementVersions,
  discardElementDraft,
  draftDiffSchema,
  elementDraftDiff,
  getElementVersion,
  listElementVersions,
  publishElement,
  restoreElementVersion,
} from '../core/content/element-drafts.ts';
import { elementSchema } from '../core/content/elements.ts';
import {
  comparePageVersions,
  discardPageDraft,
  getPageVersion,
  listPageVersions,
  pageDraftDiff,
  publishPage,
  restorePageVersion,
} from '../core/content/page-drafts.ts';
import { pageSchema } from '../core/content/pages.ts';
import { pageSchema as listSchema } from '../core/pagination.ts';
import { instant } from '../core/timestamp.ts';
import { etagHeader, problemResponse } from './responses.ts';
import { defineRoute, type RouteDefinition } from './route.ts';
import { ifMatchHeader, ifMatchVersion, siteParams, versionTag } from './schemas.ts';

type Keys = {
  diff: `GET /${string}`;
  discard: `DELETE /${string}`;
  publish: `POST /${string}`;
  versions: `GET /${string}`;
  compare: `GET /${string}`;
  version: `GET /${string}`;
  restore: `POST /${string}`;
};

const kinds = {
  element: {
    param: 'element_id',
    schema: elementSchema,
    drafted: 'name and data',
    diff: elementDraftDiff,
    discard: discardElementDraft,
    publish: publishElement,
    list: listElementVersions,
    get: getElementVersion,
    compare: compareElementVersions,
    restore: restoreElementVersion,
  },
  page: {
    param: 'page_id',
    schema: pageSchema,
    drafted: 'title, seo and template (slug, place in the tree and elements placed are always live)',
    diff: pageDraftDiff,
    discard: discardPageDraft,
    publish: publishPage,
    list: listPageVersions,
    get: getPageVersion,
    compare: comparePageVersions,
    restore: restorePageVersion,
  },
} as const;

const read = { site: 'read', scope: 'content:read' } as const;
const write = { site: 'write', scope: 'content:write' } as const;
const versionNumber = z.coerce.number().int().min(1).max(2_147_483_647);
const stale = (noun: string) => problemResponse(`The ${noun} changed since the version in If-Match`);

export function draftRoutes(kind: keyof typeof kinds, keys: Keys): RouteDefinition[] {
  const ops = kinds[kind];
  const params = siteParams.extend({ [ops.param]: z.uuid() });
  const versionParams = params.extend({ number: versionNumber.describe('The version’s number') });
  const idOf = (values: Record<string, unknown>) => values[ops.param] as string;
  const answer = { description: `The ${kind}`, schema: ops.schema, headers: { ETag: etagHeader } };
  const tagged = <T extends { version: number }>(item: T) => ({
    body: item,
    headers: { ETag: versionTag(item.version) },
  });
  return [
    defineRoute({
      key: keys.diff,
      description:
        `What the ${kind}’s draft changes, field by field: each with its live value (what public delivery shows) and its draft ` +
        `value. Drafted: ${ops.drafted}.`,
      access: read,
      request: { params },
      responses: { 200: { description: 'The fields the draft changes', schema: draftDiffSchema } },
      async handler({ params: values }, { db, access }) {
        return { body: await ops.diff(db, access, idOf(values)) };
      },
    }),

    defineRoute({
      key: keys.discard,
      description: `Drops the ${kind}’s draft, and a publication planned for it; the live ${kind} stays. Without a draft, changes nothing.`,
      access: write,
      request: { params, headers: ifMatchHeader },
      responses: { 200: answer, 412: stale(kind) },
      async handler({ params: values }, { db, access }, { req }) {
        return tagged(await ops.discard(db, access, idOf(values), ifMatchVersion(req.get('if-match'))));
      },
    }),

    defineRoute({
      key: keys.publish,
      description:
        `Publishes the ${kind}’s draft, or the ${kind} itself when it is unpublished (draft or archived), checked by every rule; ` +
        'the public cache drops what showed it, and a version is kept. With `at`, plans the publication for then instead ' +
        '(a queue job runs it; planning again moves it; `at: null` cancels it), as a post’s `scheduled_for`. ' +
        '409 when the published ' +
        `${kind} has no draft. \`If-Match\` with the ETag: 412 when someone changed it since.`,
      access: write,
      request: {
        params,
        headers: ifMatchHeader,
        body: z
          .strictObject({
            at: instant
              .nullable()
              .optional()
              .describe('When to publish (in the future); null cancels a planned publication'),
          })
          .optional(),
      },
      responses: {
        200: answer,
        409: problemResponse('Nothing to publish: the item is published and has no draft'),
        412: stale(kind),
      },
      async handler({ params: values, body }, { db, access }, { req }) {
        const ifMatch = ifMatchVersion(req.get('if-match'));
        return tagged(await ops.publish(db, access, idOf(values), body?.at, ifMatch));
      },
    }),

    defineRoute({
      key: keys.versions,
      description:
        `The ${kind}’s versions, newest first: one at every publish, every save (saves are kept CONTENT_SAVE_VERSIONS_DAYS) ` +
        'and every restore, each with who made it, when, and the fields that differ from the version before. `reason` filters.',
      access: read,
      request: { params, query: versionListQuery },
      responses: { 200: { description: 'A page of versions', schema: listSchema(versionSummarySchema) } },
      async handler({ params: values, query }, { db, access }) {
        return { body: await ops.list(db, access, idOf(values), query) };
      },
    }),

    defineRoute({
      key: keys.compare,
      description: 'What differs between two versions (`from` and `to`, by number), field by field.',
      access: read,
      request: { params, query: z.object({ from: versionNumber, to: versionNumber }) },
      responses: { 200: { description: 'The two versions and what differs', schema: comparisonSchema } },
      async handler({ params: values, query }, { db, access }) {
        return { body: await ops.compare(db, access, idOf(values), query.from, query.to) };
      },
    }),

    defineRoute({
      key: keys.version,
      description: `One version of the ${kind}, with its content.`,
      access: read,
      request: { params: versionParams },
      responses: { 200: { description: 'The version', schema: versionSchema } },
      async handler({ params: values }, { db, access }) {
        return { body: await ops.get(db, access, idOf(values), (values as unknown as { number: number }).number) };
      },
    }),

    defineRoute({
      key: keys.restore,
      description:
        `Restores a version as a new draft of a published ${kind} (public delivery keeps the live one until it is published), or ` +
        `into an unpublished ${kind}’s own fields; checked as a save is, against the type as it is now (422 lists what no longer ` +
        'fits). Kept as a version of reason restore.',
      access: write,
      request: { params: versionParams, headers: ifMatchHeader, body: z.strictObject({}).optional() },
      responses: { 200: answer, 412: stale(kind) },
      async handler({ params: values }, { db, access }, { req }) {
        const ifMatch = ifMatchVersion(req.get('if-match'));
        return tagged(
          await ops.restore(db, access, idOf(values), (values as unknown as { number: number }).number, ifMatch),
        );
      },
    }),
  ];
}
