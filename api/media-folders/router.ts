// Media Folders: a tree of folders per site, for media items.
import { z } from 'zod';
import {
  createFolder,
  deleteFolder,
  folder,
  folderListQuery,
  folderName,
  folderNode,
  folderTree,
  getFolder,
  listFolders,
  updateFolder,
} from '../../core/media/folders.ts';
import { createStorage } from '../../core/storage/index.ts';
import { pageSchema } from '../../core/pagination.ts';
import { defineRoute } from '../route.ts';
import { flag, noContent, siteParams } from '../schemas.ts';

const folderParams = siteParams.extend({ folder_id: z.uuid() });
const parentId = z.uuid().nullable().describe('The folder to put it in; null for the top level');

export const routes = [
  defineRoute({
    key: 'GET /{site_identifier}/media/folders/',
    description: 'Folders of the site, oldest first; `parent_id` lists one folder’s children (`root`: the top level).',
    request: { params: siteParams, query: folderListQuery },
    responses: { 200: { description: 'A page of folders', schema: pageSchema(folder) } },
    async handler({ params, query }, { db, actor }) {
      return { body: await db.connect((connection) => listFolders(connection, actor, params.site_identifier, query)) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/folders/',
    description: 'Creates a folder, at the top level or inside `parent_id`. 409 when a sibling has the name.',
    request: { params: siteParams, body: z.strictObject({ name: folderName, parent_id: parentId.optional() }) },
    responses: { 201: { description: 'The folder', schema: folder } },
    async handler({ params, body }, { services, actor }) {
      return { status: 201, body: await createFolder(services.db, actor, params.site_identifier, body) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/folders/tree',
    description:
      'The whole tree in one answer, siblings by name, each folder with its item count and the count of everything below it.',
    request: { params: siteParams },
    responses: {
      200: {
        description: 'The top-level folders with their children',
        schema: z.object({
          items: z.array(folderNode),
          unfiled_item_count: z.number().int().describe('Media items in no folder'),
        }),
      },
    },
    async handler({ params }, { db, actor }) {
      return { body: await db.connect((connection) => folderTree(connection, actor, params.site_identifier)) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/media/folders/{folder_id}',
    request: { params: folderParams },
    responses: { 200: { description: 'The folder', schema: folder } },
    async handler({ params }, { db, actor }) {
      return {
        body: await db.connect((connection) => getFolder(connection, actor, params.site_identifier, params.folder_id)),
      };
    },
  }),

  defineRoute({
    key: 'PATCH /{site_identifier}/media/folders/{folder_id}',
    description:
      'Renames and/or moves the folder. Authors change only the folders they made. 409 for a taken name or a move into itself.',
    request: {
      params: folderParams,
      body: z
        .strictObject({ name: folderName.optional(), parent_id: parentId.optional() })
        .refine((body) => body.name !== undefined || body.parent_id !== undefined, 'Send name, parent_id or both.'),
    },
    responses: { 200: { description: 'The folder', schema: folder } },
    async handler({ params, body }, { services, actor }) {
      return { body: await updateFolder(services.db, actor, params.site_identifier, params.folder_id, body) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/folders/{folder_id}/move',
    description:
      'Moves the folder (and everything in it) under `parent_id`, or to the top level with null. 409 for a move into itself or a folder below it.',
    request: { params: folderParams, body: z.strictObject({ parent_id: parentId }) },
    responses: { 200: { description: 'The folder', schema: folder } },
    async handler({ params, body }, { services, actor }) {
      return {
        body: await updateFolder(services.db, actor, params.site_identifier, params.folder_id, {
          parent_id: body.parent_id,
        }),
      };
    },
  }),

  defineRoute({
    key: 'DELETE /{site_identifier}/media/folders/{folder_id}',
    description:
      'Deletes an empty folder (409 otherwise). With `recursive=true`, also the folders below it and the media items in them, files included; ' +
      '409 with the `references` when one of those items is in use, unless `force=true`.',
    request: {
      params: folderParams,
      query: z.object({ recursive: flag, force: flag.describe('With recursive: delete even items something uses') }),
    },
    responses: noContent('Deleted'),
    async handler({ params, query }, { services, actor }) {
      await deleteFolder(
        services.db,
        createStorage(services.config),
        services.logger,
        actor,
        params.site_identifier,
        params.folder_id,
        query.recursive,
        query.force,
      );
      return {};
    },
  }),
];
