// The system prompt a generation job runs with. It is read when the job is
// submitted and copied into the job's input (type, version and text), not
// read when the job runs: a job that is retried, or that waits in the queue
// while an admin edits or deletes the prompt, keeps the text it was submitted
// with, and its input says which version that was. Without a stored prompt
// the input has none and the job uses its built-in instructions alone.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

/** The types the generation jobs read; agents name theirs (agents.system_prompt_type), `agent` by convention. */
export const generationPromptTypes = {
  seo: 'seo',
  transform: 'transform',
  translate: 'translate',
  website: 'website',
  agent: 'agent',
} as const;

export const jobSystemPromptSchema = z.object({
  type: z.string(),
  version: z.number().int(),
  content: z.string(),
});

export type JobSystemPrompt = z.infer<typeof jobSystemPromptSchema>;

/** The current version of a type, or null when none is stored. */
export function currentSystemPrompt(db: CommonQueryMethods, type: string): Promise<JobSystemPrompt | null> {
  return db.maybeOne(sql.type(jobSystemPromptSchema)`
    select p.prompt_type as type, p.version, v.content from system_prompts p
    join system_prompt_versions v on v.prompt_id = p.id and v.version = p.version
    where p.prompt_type = ${type}`);
}

/** `{ system_prompt }` to spread into a job's input, or nothing when no prompt of the type is stored. */
export async function promptForJob(db: CommonQueryMethods, type: string): Promise<{ system_prompt?: JobSystemPrompt }> {
  const prompt = await currentSystemPrompt(db, type);
  return prompt ? { system_prompt: prompt } : {};
}
