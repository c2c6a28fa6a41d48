// System prompts: the guidance text of a kind of generation, by its type
// (seo, transform, translate, website, agent, ...). Global admins write them
// (POST creates or updates), every signed-in caller reads them. A save that
// changes the text or description is a new version and the earlier ones are
// kept, with who wrote each and when; a save that changes nothing makes no
// version. DELETE removes the prompt with all its versions: jobs copy the text
// they run with at submit (./for-jobs.ts), so none depends on the rows.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { UserActor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { pageQuery, type PageQuery } from '../pagination.ts';
import { sortOptions, sortedPage, type SortKey } from '../sorting.ts';
import { timestamp } from '../timestamp.ts';

/** The rule agents.system_prompt_type follows too: a slug of lower-case letters and digits, at most 63 characters. */
export const promptTypeSchema = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]+([_-][a-z0-9]+)*$/, 'lower-case letters and digits, words joined by _ or -, e.g. seo')
  .describe('The kind of generation, e.g. seo, transform, translate, website, agent');

export const systemPromptSchema = z
  .object({
    id: z.uuid(),
    prompt_type: z.string(),
    content: z.string().describe('The text of the current version'),
    description: z.string(),
    version: z.number().int().describe('The current version: 1 at creation, one more at each change'),
    created_by: z.uuid().nullable(),
    updated_by: z.uuid().nullable().describe('Who wrote the current version'),
    created_at: timestamp,
    updated_at: timestamp.describe('When the current version was written'),
  })
  .meta({ id: 'SystemPrompt' });

export type SystemPrompt = z.infer<typeof systemPromptSchema>;

export const systemPromptVersionSchema = z
  .object({
    version: z.number().int(),
    content: z.string(),
    description: z.string(),
    changed_by: z.uuid().nullable().describe('The global admin who wrote it; null once that user is deleted'),
    changed_at: timestamp,
  })
  .meta({ id: 'SystemPromptVersion' });

export const systemPromptDetailSchema = systemPromptSchema
  .extend({
    versions: z
      .array(systemPromptVersionSchema)
      .describe('Its versions, newest first (the first is the current one), at most versions_limit'),
    next_versions_before: z
      .number()
      .int()
      .nullable()
      .describe('Pass as ?versions_before= for the older versions; null when there are none'),
  })
  .meta({ id: 'SystemPromptWithVersions' });

export const systemPromptInput = z.strictObject({
  content: z.string().trim().min(1).max(50_000).describe('The prompt text'),
  description: z
    .string()
    .trim()
    .max(2000)
    .optional()
    .describe('What it is for; when absent, an update keeps the current description'),
});

export type SystemPromptInput = z.output<typeof systemPromptInput>;

const sorts = {
  prompt_type: { column: 'prompt_type', cast: 'text' },
  updated_at: { column: 'updated_at', cast: 'timestamptz' },
} as const satisfies Record<string, SortKey>;

export const systemPromptListQuery = pageQuery.extend({
  sort: z.enum(sortOptions(sorts)).default('prompt_type').describe('A field, `-` first for descending'),
});

export const versionsQuery = z.object({
  versions_limit: z.coerce.number().int().min(0).max(200).default(20).describe('How many versions to list'),
  versions_before: z.coerce
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .optional()
    .describe('List the versions older than this one'),
});

const columns = sql.fragment`p.id, p.prompt_type, v.content, v.description, p.version, p.created_by,
  v.changed_by as updated_by, p.created_at, p.updated_at`;

/** The prompts joined with their current versions: a select that ends in a WHERE clause taking more conditions. */
const current = sql.fragment`select ${columns} from system_prompts p
  join system_prompt_versions v on v.prompt_id = p.id and v.version = p.version where true`;

export function listSystemPrompts(db: CommonQueryMethods, query: PageQuery & { sort: string }) {
  return sortedPage(db, systemPromptSchema, current, 'p', sorts, query);
}

/** The current version of a type; 404 when none is stored. */
async function readPrompt(db: CommonQueryMethods, type: string): Promise<SystemPrompt> {
  const row = await db.maybeOne(sql.type(systemPromptSchema)`${current} and p.prompt_type = ${type}`);
  if (!row) throw notFound(`No system prompt of type ${type}.`);
  return row;
}

export async function findSystemPrompt(
  db: CommonQueryMethods,
  type: string,
  query: z.output<typeof versionsQuery>,
): Promise<z.infer<typeof systemPromptDetailSchema>> {
  const prompt = await readPrompt(db, type);
  const rows = await db.any(sql.type(systemPromptVersionSchema)`
    select version, content, description, changed_by, changed_at from system_prompt_versions
    where prompt_id = ${prompt.id} and version < ${query.versions_before ?? prompt.version + 1}
    order by version desc limit ${query.versions_limit + 1}`);
  const versions = rows.slice(0, query.versions_limit);
  // The oldest version listed, when an older one exists (limit 0 lists none and points at the newest).
  const more = rows.length > query.versions_limit;
  const next = more ? (versions.at(-1)?.version ?? rows[0]!.version + 1) : null;
  return { ...prompt, versions, next_versions_before: next };
}

export type SaveOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Creates the prompt of a type (version 1) or makes its next version, in one
 * transaction. Unchanged text and description make no version. Two admins
 * saving at once both get a version, one after the other: the prompt row is
 * locked while its current text is compared, and a first save racing another
 * becomes an update on the unique type.
 */
export async function saveSystemPrompt(
  db: CommonQueryMethods,
  actor: UserActor,
  type: string,
  input: SystemPromptInput,
): Promise<{ prompt: SystemPrompt; outcome: SaveOutcome }> {
  return db.transaction(async (tx) => {
    const existing = await tx.maybeOne(sql.type(z.object({ content: z.string(), description: z.string() }))`
      select v.content, v.description from system_prompts p
      join system_prompt_versions v on v.prompt_id = p.id and v.version = p.version
      where p.prompt_type = ${type} for update of p`);
    const description = input.description ?? existing?.description ?? '';
    if (existing && existing.content === input.content && existing.description === description)
      return { prompt: await readPrompt(tx, type), outcome: 'unchanged' };
    const saved = await tx.one(sql.type(z.object({ id: z.uuid(), version: z.number().int() }))`
      insert into system_prompts (prompt_type, created_by) values (${type}, ${actor.userId})
      on conflict (prompt_type) do update set version = system_prompts.version + 1
      returning id, version`);
    await tx.query(sql.typeAlias('void')`
      insert into system_prompt_versions (prompt_id, version, content, description, changed_by)
      values (${saved.id}, ${saved.version}, ${input.content}, ${description}, ${actor.userId})`);
    return { prompt: await readPrompt(tx, type), outcome: saved.version === 1 ? 'created' : 'updated' };
  });
}

export async function deleteSystemPrompt(db: CommonQueryMethods, type: string): Promise<void> {
  const deleted = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    delete from system_prompts where prompt_type = ${type} returning id`);
  if (!deleted) throw notFound(`No system prompt of type ${type}.`);
}
