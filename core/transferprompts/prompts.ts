// Transfer prompts: named templates for handing work from one agent or step
// to another, `{{variables}}` in the template declared beside it
// (./template.ts checks that the two agree on every save). Names are unique
// regardless of case. Global admins write them; signed-in callers list them.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { UserActor } from '../actor.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { pageQuery, type PageQuery } from '../pagination.ts';
import { sortOptions, sortedPage, type SortKey } from '../sorting.ts';
import { timestamp } from '../timestamp.ts';
import { templateProblems, variableName } from './template.ts';

const variableSchema = z.object({
  name: z.string().describe('As used in the template: {{name}}'),
  description: z.string().describe('What the caller fills in'),
});

export const transferPromptSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    template: z.string().describe('The text, with {{name}} where a variable’s value goes'),
    variables: z.array(variableSchema),
    created_by: z.uuid().nullable(),
    updated_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'TransferPrompt' });

export type TransferPrompt = z.infer<typeof transferPromptSchema>;

const fields = {
  name: z.string().trim().min(1).max(200).describe('Unique, regardless of case'),
  description: z.string().trim().max(2000),
  template: z
    .string()
    .min(1)
    .max(50_000)
    .describe('Placeholders are {{name}}; every one must be declared in variables, and every variable used'),
  variables: z
    .array(
      z.strictObject({
        name: z
          .string()
          .max(64)
          .regex(variableName, 'letters, digits and _, not starting with a digit')
          .describe('As used in the template'),
        description: z.string().trim().max(500).default(''),
      }),
    )
    .max(100)
    .describe('Each name the template uses, once'),
};

export const transferPromptInput = z.strictObject({
  ...fields,
  description: fields.description.default(''),
  variables: fields.variables.default([]),
});

export const transferPromptChange = z
  .strictObject({
    name: fields.name.optional(),
    description: fields.description.optional(),
    template: fields.template.optional(),
    variables: fields.variables.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, 'Send at least one field.');

export type TransferPromptInput = z.output<typeof transferPromptInput>;
export type TransferPromptChange = z.output<typeof transferPromptChange>;

const sorts = {
  name: { column: 'name', cast: 'text' },
  created_at: { column: 'created_at', cast: 'timestamptz' },
  updated_at: { column: 'updated_at', cast: 'timestamptz' },
} as const satisfies Record<string, SortKey>;

export const transferPromptListQuery = pageQuery.extend({
  sort: z.enum(sortOptions(sorts)).default('name').describe('A field, `-` first for descending'),
});

const columns = sql.fragment`t.id, t.name, t.description, t.template, t.variables, t.created_by, t.updated_by,
  t.created_at, t.updated_at`;

/** 422 naming every disagreement between the template and its variables. */
function requireAgreement(prompt: Pick<TransferPromptInput, 'template' | 'variables'>): void {
  const problems = templateProblems(prompt.template, prompt.variables);
  if (problems.length > 0) throw new Problem(422, 'The template and its variables do not agree.', { errors: problems });
}

/** The unique name said no. */
function clash(error: unknown, name: string): never {
  if (error instanceof UniqueIntegrityConstraintViolationError)
    throw conflict(`A transfer prompt named ${name} exists already (names are compared regardless of case).`);
  throw error;
}

/** One transfer prompt; null when there is none of that id. */
export const transferPromptById = (db: CommonQueryMethods, id: string) =>
  db.maybeOne(sql.type(transferPromptSchema)`select ${columns} from transfer_prompts t where t.id = ${id}`);

/** One transfer prompt by its name, regardless of case (as names are unique); null when there is none. */
export const transferPromptByName = (db: CommonQueryMethods, name: string) =>
  db.maybeOne(
    sql.type(transferPromptSchema)`select ${columns} from transfer_prompts t where lower(t.name) = lower(${name})`,
  );

export function listTransferPrompts(db: CommonQueryMethods, query: PageQuery & { sort: string }) {
  return sortedPage(
    db,
    transferPromptSchema,
    sql.fragment`select ${columns} from transfer_prompts t where true`,
    't',
    sorts,
    query,
  );
}

export async function createTransferPrompt(
  db: CommonQueryMethods,
  actor: UserActor,
  input: TransferPromptInput,
): Promise<TransferPrompt> {
  requireAgreement(input);
  try {
    return await db.one(sql.type(transferPromptSchema)`
      insert into transfer_prompts as t (name, description, template, variables, created_by, updated_by)
      values (${input.name}, ${input.description}, ${input.template}, ${sql.jsonb(input.variables)},
              ${actor.userId}, ${actor.userId})
      returning ${columns}`);
  } catch (error) {
    clash(error, input.name);
  }
}

/** Changes what is sent; the result, not only the change, must agree with itself. */
export async function updateTransferPrompt(
  db: CommonQueryMethods,
  actor: UserActor,
  id: string,
  change: TransferPromptChange,
): Promise<TransferPrompt> {
  return db.transaction(async (tx) => {
    const current = await tx.maybeOne(sql.type(transferPromptSchema)`
      select ${columns} from transfer_prompts t where t.id = ${id} for update`);
    if (!current) throw notFound('No such transfer prompt.');
    const next = {
      name: change.name ?? current.name,
      description: change.description ?? current.description,
      template: change.template ?? current.template,
      variables: change.variables ?? current.variables,
    };
    requireAgreement(next);
    try {
      return await tx.one(sql.type(transferPromptSchema)`
        update transfer_prompts as t set name = ${next.name}, description = ${next.description},
          template = ${next.template}, variables = ${sql.jsonb(next.variables)}, updated_by = ${actor.userId}
        where t.id = ${id} returning ${columns}`);
    } catch (error) {
      clash(error, next.name);
    }
  });
}

export async function deleteTransferPrompt(db: CommonQueryMethods, id: string): Promise<void> {
  const deleted = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    delete from transfer_prompts where id = ${id} returning id`);
  if (!deleted) throw notFound('No such transfer prompt.');
}
