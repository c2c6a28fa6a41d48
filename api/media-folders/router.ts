// Media Folders: a tree of folders per site, for media items.
import { z } from 'zod';
import {
  createFolder,
  deleteFolder,
  folderSchema,
  folderListQuery,
  folderName,
  folderNodeSchema,
  folderTree,
  getFolder,
  listFolders,
  updateFolder,
} from '../../core/media/folders.ts';
import { pageSchema } from '../../core/pagination.ts';
import { locationHeader, problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { flag, noContent, siteParams } from '../schemas.ts';

const folderParams = siteParams.extend({ folder_id: z.uuid() });
const parentId = z.uuid().nullable().describe('The folder to put it in; null for the top level');
const nameTaken = problemResponse('A folder of that name is already there');
const nameTakenOrCycle = problemResponse(
  'A folder of that name is already there, or the move would put it inside itself',
);

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/media/folders/',
    description: 'Folders of the site, oldest first; `parent_id` lists one folder’s children (`root`: the top level).',
    access: { site: 'read', scope: 'media:read' },
    request: { params: siteParams, query: folderListQuery },
    responses: { 200: { description: 'A page of folders', schema: pageSchema(folderSchema) } },
    async handler({ query }, { db, access }) {
      return { body: await listFolders(db, access, query) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/folders/',
    description: 'Creates a folder, at the top level or inside `parent_id`. 409 when a sibling has the name.',
    access: { site: 'write', scope: 'media:write' },
    request: { params: siteParams, body: z.strictObject({ name: folderName, parent_id: parentId.optional() }) },
    responses: {
      201: { description: 'The folder', schema: folderSchema, headers: { Location: locationHeader } },
      409: nameTaken,
    },
    async handler({ params, body }, { db, access }) {
      const created = await createFolder(db, access, body);
      return {
        status: 201,
        body: created,
        headers: { Location: `/${params.site_identifier}/media/folders/${created.id}` },
      };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/folders/tree',
    description:
      'The whole tree in one answer, siblings by name, each folder with its item count and the count of everything below it.',
    access: { site: 'read', scope: 'media:read' },
    request: { params: siteParams },
    responses: {
      200: {
        description: 'The top-level folders with their children',
        schema: z.object({
          items: z.array(folderNodeSchema),
          unfiled_item_count: z.number().int().describe('Media items in no folder'),
        }),
      },
    },
    async handler(_input, { db, access }) {
      return { body: await folderTree(db, access) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/folders/{folder_id}',
    access: { site: 'read', scope: 'media:read' },
    request: { params: folderParams },
    responses: { 200: { description: 'The folder', schema: folderSchema } },
    async handler({ params }, { db, access }) {
      return { body: await getFolder(db, access, params.folder_id) };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/media/folders/{folder_id}',
    description:
      'Renames and/or moves the folder. Authors change only the folders they made. 409 for a taken name or a move into itself.',
    access: { site: 'write', scope: 'media:write' },
    request: {
      params: folderParams,
      body: z
        .strictObject({ name: folderName.optional(), parent_id: parentId.optional() })
        .refine((body) => body.name !== undefined || body.parent_id !== undefined, 'Send name, parent_id or both.'),
    },
    responses: { 200: { description: 'The folder', schema: folderSchema }, 409: nameTakenOrCycle },
    async handler({ params, body }, { db, access }) {
      return { body: await updateFolder(db, access, params.folder_id, body) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/folders/{folder_id}/move',
    description:
      'Moves the folder (and everything in it) under `parent_id`, or to the top level with null. 409 for a move into itself or a folder below it.',
    access: { site: 'write', scope: 'media:write' },
    request: { params: folderParams, body: z.strictObject({ parent_id: parentId }) },
    responses: { 200: { description: 'The folder', schema: folderSchema }, 409: nameTakenOrCycle },
    async handler({ params, body }, { db, access }) {
      return { body: await updateFolder(db, access, params.folder_id, { parent_id: body.parent_id }) };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/media/folders/{folder_id}',
    description:
      'Deletes an empty folder (409 otherwise). With `recursive=true`, also the folders below it and the media items in them, files included; ' +
      '409 with the `references` when one of those items is in use, unless `force=true`.',
    access: { site: 'write', scope: 'media:write' },
    request: {
      params: folderParams,
      query: z.object({ recursive: flag, force: flag.describe('With recursive: delete even items something uses') }),
    },
    responses: {
      ...noContent('Deleted'),
      409: problemResponse('The folder is not empty (without recursive), or an item in it is in use (without force)'),
    },
    async handler({ params, query }, { deps, access }) {
      await deleteFolder(deps, { access, id: params.folder_id, recursive: query.recursive, force: query.force });
      return {};
    },
  }),
];
