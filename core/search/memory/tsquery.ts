// PostgreSQL's text form of a tsquery ('a' & !( 'b' | 'c' )), as
// websearch_to_tsquery writes it, read into a tree the in-memory index
// evaluates. Only what it evaluates exactly is read: words, and, or, not.
// A phrase (<->, <N>), a prefix (:*) or a weight restriction (:AB) answers
// undefined, and the search is made by PostgreSQL instead.

export type QueryNode =
  { op: 'word'; lexeme: string } | { op: 'not'; arg: QueryNode } | { op: 'and' | 'or'; args: QueryNode[] };

class Unsupported extends Error {}

/** The query's tree; null for an empty query (matches nothing); undefined when only PostgreSQL can evaluate it. */
export function parseTsquery(text: string): QueryNode | null | undefined {
  let at = 0;
  const skip = () => {
    while (text.charCodeAt(at) === 32) at++;
  };
  const operand = (): QueryNode => {
    skip();
    const char = text[at];
    if (char === '!') {
      at++;
      return { op: 'not', arg: operand() };
    }
    if (char === '(') {
      at++;
      const inner = or();
      skip();
      if (text[at] !== ')') throw new Error(`expected ) at ${at} in ${text}`);
      at++;
      return inner;
    }
    if (char !== "'") throw new Error(`unexpected ${char ?? 'end'} at ${at} in ${text}`);
    at++;
    let lexeme = '';
    for (;;) {
      const next = text[at++];
      if (next === undefined) throw new Error(`unterminated lexeme in ${text}`);
      if (next === '\\' || (next === "'" && text[at] === "'")) lexeme += text[at++];
      else if (next === "'") break;
      else lexeme += next;
    }
    if (text[at] === ':') throw new Unsupported();
    return { op: 'word', lexeme };
  };
  const phrase = (): QueryNode => {
    const first = operand();
    skip();
    if (text[at] === '<') throw new Unsupported();
    return first;
  };
  const chain = (op: 'and' | 'or', sign: string, next: () => QueryNode) => (): QueryNode => {
    const args = [next()];
    for (;;) {
      skip();
      if (text[at] !== sign) break;
      at++;
      args.push(next());
    }
    return args.length === 1 ? args[0]! : { op, args };
  };
  const and = chain('and', '&', phrase);
  const or = chain('or', '|', and);
  if (text.trim() === '') return null;
  try {
    const tree = or();
    skip();
    if (at !== text.length) throw new Error(`unexpected ${text[at]} at ${at} in ${text}`);
    return tree;
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/** Whether a document holding the lexemes `has` says it holds matches the query. */
export function holds(node: QueryNode, has: (lexeme: string) => boolean): boolean {
  switch (node.op) {
    case 'word':
      return has(node.lexeme);
    case 'not':
      return !holds(node.arg, has);
    case 'and':
      return node.args.every((arg) => holds(arg, has));
    case 'or':
      return node.args.some((arg) => holds(arg, has));
  }
}

/** Every lexeme of the query, once, in order. */
export function lexemesOf(node: QueryNode, into = new Set<string>()): Set<string> {
  if (node.op === 'word') into.add(node.lexeme);
  else if (node.op === 'not') lexemesOf(node.arg, into);
  else for (const arg of node.args) lexemesOf(arg, into);
  return into;
}

/** The lexemes a match may show, for marking them in snippets: all but those negated one by one (`-word`). */
export function shownLexemes(node: QueryNode, into = new Set<string>()): Set<string> {
  if (node.op === 'word') into.add(node.lexeme);
  else if (node.op === 'not') {
    if (node.arg.op !== 'word') shownLexemes(node.arg, into);
  } else for (const arg of node.args) shownLexemes(arg, into);
  return into;
}
