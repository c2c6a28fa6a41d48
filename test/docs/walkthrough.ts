// Reads the walkthrough of docs/getting-started.md as a reader would run it:
// its ```sh blocks in order, each a curl request and the shell variables it
// keeps, and after each the status and the answer the page shows. Only the
// few shell forms the page uses are understood; anything else is refused, so
// the page cannot quietly ask a reader for something the test never ran.

/** One request of the walkthrough, with what the page says it answers. */
export type Step = {
  /** Where it starts in the page, for messages. */
  line: number;
  /** The block's commands, continuation lines joined, comments dropped. */
  commands: string[];
  /** The status the prose between the block and its answer names (`201 Created`). */
  status?: number;
  /** The answer block: parsed JSON, or the text of a ```text block. */
  answer?: { json: unknown } | { text: string };
};

/** The steps of a Markdown page: every ```sh block, with the answer block after it. */
export function stepsOf(markdown: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!fence) {
      prose.push(lines[i]!);
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const language = fence[1];
    const last = steps.at(-1);
    if (language === 'sh') {
      steps.push({ line: start + 1, commands: commandsOf(body) });
    } else if ((language === 'json' || language === 'text') && last && !last.answer) {
      const status = /`(\d{3})(?: [^`]*)?`/.exec(prose.join('\n'));
      if (status) last.status = Number(status[1]);
      last.answer = language === 'json' ? { json: JSON.parse(body.join('\n')) } : { text: body.join('\n') };
    }
    prose = [];
  }
  return steps;
}

/** The block's commands: a backslash joins a line to the next; a newline inside quotes stays in its word. */
function commandsOf(body: string[]): string[] {
  const text = body.join('\n').replace(/\\\n\s*/g, '');
  const commands: string[] = [];
  let current = '';
  let quote: string | undefined;
  for (const c of text) {
    if (c === '\n' && !quote) {
      commands.push(current);
      current = '';
      continue;
    }
    if (quote ? c === quote : c === "'" || c === '"') quote = quote ? undefined : c;
    current += c;
  }
  commands.push(current);
  return commands.map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

/** Splits a command line into words as sh would, expanding $NAME and ${NAME} outside single quotes. */
export function words(line: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word: string | undefined;
  const expand = (text: string) =>
    text.replace(/\$\{?([A-Z_][A-Z0-9_]*)\}?/g, (_, name: string) => {
      if (!(name in vars)) throw new Error(`$${name} is used before the walkthrough sets it`);
      return vars[name]!;
    });
  for (let i = 0; i < line.length;) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== undefined) out.push(word);
      word = undefined;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed quote in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      // Inside double quotes a backslash keeps the next \, " or $ as it is.
      let text = '';
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && '\\"$'.includes(line[i + 1] ?? '')) text += line[++i] === '$' ? '\u0000' : line[i];
        else text += line[i];
      }
      if (i >= line.length) throw new Error(`unclosed quote in: ${line}`);
      word = (word ?? '') + expand(text).replaceAll('\u0000', '$');
      i++;
    } else {
      let end = i;
      while (end < line.length && !' \t\'"'.includes(line[end]!)) end++;
      word = (word ?? '') + expand(line.slice(i, end));
      i = end;
    }
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** A value picked from a JSON answer by a jq path of the simple kind (`.id`, `.items[0].id`). */
export function pick(value: unknown, path: string): unknown {
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+$/.test(path)) throw new Error(`jq path not understood: ${path}`);
  let here = value;
  for (const [, key, index] of path.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)) {
    here = (here as Record<string, unknown> | undefined)?.[key ?? Number(index)];
  }
  return here;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * Where the answer got differs from the one shown. The page may leave fields
 * out (an abbreviated answer); every field it shows must be there. Ids,
 * times and values shortened with "…" are compared by kind only, since
 * they differ on every run; everything else must be equal.
 */
export function differences(shown: unknown, actual: unknown, at = '$'): string[] {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${at}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length < shown.length) return [`${at}: expected at least ${shown.length} items, got ${actual.length}`];
    return shown.flatMap((item, i) => differences(item, actual[i], `${at}[${i}]`));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return [`${at}: expected an object, got ${JSON.stringify(actual)}`];
    }
    return Object.entries(shown).flatMap(([key, value]) =>
      key in actual
        ? differences(value, (actual as Record<string, unknown>)[key], `${at}.${key}`)
        : [`${at}.${key}: missing`],
    );
  }
  if (typeof shown === 'string' && (uuid.test(shown) || timestamp.test(shown) || shown.includes('…'))) {
    return typeof actual === 'string' ? [] : [`${at}: expected a string, got ${JSON.stringify(actual)}`];
  }
  return Object.is(shown, actual) ? [] : [`${at}: expected ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
}

/** A curl command line as a fetch request, with where its output goes. */
export type CurlRequest = {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** A JSON or form body (`-d`), or multipart fields (`-F`, files as `@name`). */
  data?: string;
  form?: [name: string, value: string][];
  /** `-o FILE`: the body goes to a file. */
  output?: string;
  /** `-w FORMAT`: what curl prints after the body. */
  writeOut?: string;
};

/** The options the walkthrough uses; any other is refused. */
export function curlRequest(argv: string[]): CurlRequest {
  if (argv[0] !== 'curl') throw new Error(`not a curl command: ${argv.join(' ')}`);
  const request: CurlRequest = { url: '', method: '', headers: {} };
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '-s' || arg === '--silent') continue;
    else if (arg === '-X' || arg === '--request') request.method = value();
    else if (arg === '-H' || arg === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      request.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === '-d' || arg === '--data') request.data = value();
    else if (arg === '-F' || arg === '--form') {
      const field = value();
      const equals = field.indexOf('=');
      (request.form ??= []).push([field.slice(0, equals), field.slice(equals + 1)]);
    } else if (arg === '-o' || arg === '--output') request.output = value();
    else if (arg === '-w' || arg === '--write-out') request.writeOut = value();
    else if (arg.startsWith('-')) throw new Error(`curl option not understood by the test: ${arg}`);
    else request.url = arg;
  }
  request.method ||= request.data !== undefined || request.form ? 'POST' : 'GET';
  return request;
}
