// The placeholders of a transfer prompt's template: `{{name}}` (spaces inside
// the braces allowed), a name being letters, digits and _, not starting with
// a digit. A template and its declared variables must agree: every name used
// is declared, every declared name is used, none is declared twice, and no
// `{{` is left that is not a placeholder (a typo such as `{{user name}}` would
// otherwise reach the model as text). Every disagreement is reported at once.
import type { ProblemField } from '../errors.ts';

export const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Linear: what lies between the braces is taken whole and trimmed after (a
// lazy match between optional spaces backtracks cubically on `{{` and spaces).
const placeholder = /\{\{([^{}]*)\}\}/g;

/** The names a template uses, in order of first use, and what looks like a placeholder but is not one. */
export function placeholders(template: string): { used: string[]; malformed: string[] } {
  const used = new Set<string>();
  const malformed: string[] = [];
  for (const [whole, inside] of template.matchAll(placeholder)) {
    const name = inside?.trim();
    if (name !== undefined && variableName.test(name)) used.add(name);
    else malformed.push(whole);
  }
  if (template.replace(placeholder, '').includes('{{')) malformed.push('{{ without a closing }}');
  return { used: [...used], malformed };
}

/** Where the template and its variables disagree, as 422 fields; empty when they agree. */
export function templateProblems(template: string, variables: { name: string }[]): ProblemField[] {
  const { used, malformed } = placeholders(template);
  const problems: ProblemField[] = malformed.map((text) => ({
    path: 'body.template',
    message: `${text} is not a placeholder: write {{name}}, with letters, digits and _ in the name`,
  }));
  const declared = new Map<string, number>();
  variables.forEach((variable, index) => {
    const first = declared.get(variable.name);
    if (first !== undefined)
      problems.push({
        path: `body.variables.${index}.name`,
        message: `${variable.name} is declared twice (also variables.${first})`,
      });
    else declared.set(variable.name, index);
  });
  for (const name of used)
    if (!declared.has(name))
      problems.push({ path: 'body.template', message: `uses {{${name}}}, which variables does not declare` });
  for (const [name, index] of declared)
    if (!used.includes(name))
      problems.push({
        path: `body.variables.${index}.name`,
        message: `${name} is declared but the template never uses it`,
      });
  return problems;
}
