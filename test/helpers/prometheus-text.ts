// A strict reader of Prometheus' text exposition format (version 0.0.4), so a
// test can prove that /metrics is something Prometheus will ingest, not only
// that it holds some names. Each rule follows
// https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details
// ("Text format details"); the histogram rules follow
// https://prometheus.io/docs/concepts/metric_types/#histogram. It throws on the
// first line that breaks one, naming the line.

export type Sample = { name: string; labels: Record<string, string>; value: number };
export type Family = {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
};
export type Exposition = { families: Map<string, Family>; samples: Sample[] };

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * "value is a float represented as required by Go's ParseFloat() function … NaN, +Inf, and -Inf are valid";
 * ParseFloat reads "NaN", "Inf" and "Infinity" in any case (prom-client writes NaN as `Nan`).
 */
function parseValue(text: string, line: string): number {
  if (/^nan$/i.test(text)) return NaN;
  const infinite = /^([+-]?)inf(inity)?$/i.exec(text);
  if (infinite) return infinite[1] === '-' ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`not a float: ${text} in ${line}`);
  return Number(text);
}

/** "label_value can be any sequence of UTF-8 characters, but the backslash, the double-quote, and the line feed must be escaped". */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let at = 0;
  for (;;) {
    while (text[at] === ' ') at++;
    if (text[at] === '}') return { labels, rest: text.slice(at + 1) };
    const name = /^[^=\s]*/.exec(text.slice(at))![0];
    if (!labelName.test(name)) throw new Error(`bad label name "${name}" in ${line}`);
    if (name.startsWith('__')) throw new Error(`reserved label name ${name} in ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in ${line}`);
    at += name.length;
    if (text.slice(at, at + 2) !== '="') throw new Error(`expected ="…" after ${name} in ${line}`);
    at += 2;
    let value = '';
    for (;;) {
      const char = text[at++];
      if (char === undefined) throw new Error(`unterminated label value in ${line}`);
      if (char === '"') break;
      if (char === '\\') {
        const escaped = text[at++];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape \\${escaped} in ${line}`);
      } else value += char;
    }
    labels[name] = value;
    while (text[at] === ' ') at++;
    if (text[at] === ',') at++;
    else if (text[at] !== '}') throw new Error(`expected , or } in ${line}`);
  }
}

/** "Only one TYPE line may exist for a given metric name"; the suffixes a histogram's and a summary's samples carry. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = families.get(base)?.type;
    if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
  }
  return name;
}

export function parsePrometheusText(text: string): Exposition {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the last line must end with a line feed');
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  // "All lines for a given metric must be provided as one single group."
  const closed = new Set<string>();
  let open: string | undefined;
  const enter = (name: string, line: string) => {
    if (open === name) return;
    if (closed.has(name)) throw new Error(`${name} is not one group: ${line}`);
    if (open !== undefined) closed.add(open);
    open = name;
  };
  const family = (name: string): Family => {
    let found = families.get(name);
    if (!found) families.set(name, (found = { name, type: 'untyped', help: undefined, samples: [] }));
    return found;
  };
  const typed = new Set<string>();
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const match = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!match) continue; // any other comment is ignored
      const [, keyword, name, rest = ''] = match as unknown as [string, string, string, string | undefined];
      if (!metricName.test(name)) throw new Error(`bad metric name in ${line}`);
      enter(name, line);
      const target = family(name);
      if (target.samples.length > 0) throw new Error(`${keyword} after the samples of ${name}`);
      if (keyword === 'TYPE') {
        // "The TYPE line for a metric name must appear before the first sample is reported for that metric name."
        if (typed.has(name)) throw new Error(`two TYPE lines for ${name}`);
        if (!types.has(rest.trim())) throw new Error(`unknown type in ${line}`);
        typed.add(name);
        target.type = rest.trim() as Family['type'];
      } else {
        if (target.help !== undefined) throw new Error(`two HELP lines for ${name}`);
        if (/\\[^n\\]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`bad escape in ${line}`);
        target.help = rest;
      }
      continue;
    }
    const name = /^[^\s{]*/.exec(line)![0];
    if (!metricName.test(name)) throw new Error(`bad metric name in ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest.slice(1), line));
    const fields = rest.trim().split(/\s+/);
    if (!/^\s/.test(rest) || fields.length < 1 || fields.length > 2) throw new Error(`expected a value in ${line}`);
    const value = parseValue(fields[0]!, line);
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`bad timestamp in ${line}`);
    const base = familyOf(name, families);
    enter(base, line);
    const sample = { name, labels, value };
    family(base).samples.push(sample);
    samples.push(sample);
  }
  for (const found of families.values()) check(found);
  return { families, samples };
}

const key = (sample: Sample, without?: string) =>
  sample.name +
  JSON.stringify(
    Object.entries(sample.labels)
      .filter(([name]) => name !== without)
      .sort(),
  );

/** No series twice; counters never negative; each histogram's buckets cumulative up to +Inf, which is its count. */
function check(family: Family): void {
  const seen = new Set<string>();
  for (const sample of family.samples) {
    if (seen.has(key(sample))) throw new Error(`${sample.name} ${JSON.stringify(sample.labels)} twice`);
    seen.add(key(sample));
  }
  if (family.type === 'counter') {
    for (const sample of family.samples)
      if (!(sample.value >= 0)) throw new Error(`counter ${sample.name} is ${sample.value}`);
  }
  if (family.type !== 'histogram') return;
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const suffix = sample.name.slice(family.name.length);
    if (!['_bucket', '_sum', '_count'].includes(suffix)) throw new Error(`${sample.name} in histogram ${family.name}`);
    const id = key({ ...sample, name: family.name }, 'le');
    const entry = series.get(id) ?? { buckets: [] };
    series.set(id, entry);
    if (suffix === '_bucket') {
      if (sample.labels.le === undefined) throw new Error(`${sample.name} without le`);
      entry.buckets.push([parseValue(sample.labels.le, sample.name), sample.value]);
    } else if ('le' in sample.labels) throw new Error(`${sample.name} with le`);
    else if (suffix === '_count') entry.count = sample.value;
    else entry.sum = sample.value;
  }
  for (const [id, entry] of series) {
    const buckets = entry.buckets.sort((x, y) => x[0] - y[0]);
    const last = buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`histogram ${id} has no +Inf bucket`);
    if (entry.count === undefined || entry.sum === undefined) throw new Error(`histogram ${id} lacks _count or _sum`);
    if (last[1] !== entry.count)
      throw new Error(`histogram ${id}: +Inf bucket ${last[1]} is not its count ${entry.count}`);
    for (let i = 1; i < buckets.length; i++)
      if (buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`histogram ${id}: buckets not cumulative`);
  }
}

/** The one sample with this name whose labels include these; undefined when none. */
export function sampleOf(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): Sample | undefined {
  const found = exposition.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([label, value]) => s.labels[label] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0];
}
