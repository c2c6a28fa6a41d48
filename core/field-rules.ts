// Rules between fields of a body ("exactly one of", "needs"), written in JSON
// Schema for the document (a schema's `.meta()`), beside the zod refinement
// that enforces each: a client's validator then refuses what the server
// refuses, before sending it.

/** Exactly one of the fields is given. */
export const exactlyOneOf = (...names: string[]) => ({ oneOf: names.map((name) => ({ required: [name] })) });

/** At least one of the fields is given (an array among them with at least one item). */
export function atLeastOneOf(...names: string[]) {
  return { anyOf: names.map((name) => ({ required: [name], properties: { [name]: { minItems: 1, minLength: 1 } } })) };
}

/** Not both fields are given. */
export const notBoth = (first: string, second: string) => ({ not: { required: [first, second] } });

/** A field that is taken only beside others (`webhook_events` needs `webhook`). */
export const needs = (field: string, ...others: string[]) => ({ dependentRequired: { [field]: others } });
