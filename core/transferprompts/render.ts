// A transfer prompt put to use: its template with each declared variable's
// value in its placeholders. Every declared variable must be given and
// nothing else, so a caller learns of a misspelt name rather than sending a
// model a prompt with a hole in it.
import { Problem, notFound, type ProblemField } from '../errors.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { transferPromptById } from './prompts.ts';

/** The prompt's text with the values in; 404 for an unknown prompt, 422 naming each variable missing or unknown. */
export async function renderTransferPrompt(
  db: CommonQueryMethods,
  id: string,
  values: Record<string, string>,
  path: { prompt: string; variables: string },
): Promise<string> {
  const prompt = await transferPromptById(db, id);
  if (!prompt) throw notFound('No such transfer prompt.');
  const declared = prompt.variables.map((variable) => variable.name);
  const problems: ProblemField[] = [
    ...declared
      .filter((name) => values[name] === undefined)
      .map((name) => ({ path: `${path.variables}.${name}`, message: `the prompt ${prompt.name} needs ${name}` })),
    ...Object.keys(values)
      .filter((name) => !declared.includes(name))
      .map((name) => ({
        path: `${path.variables}.${name}`,
        message: `the prompt ${prompt.name} has no variable ${name}`,
      })),
  ];
  if (problems.length)
    throw new Problem(422, `The variables do not match the transfer prompt ${prompt.name}.`, { errors: problems });
  return prompt.template.replace(/\{\{([^{}]*)\}\}/g, (_whole, inside: string) => values[inside.trim()] ?? '');
}
