// The route manifest: every endpoint of the service (group, method, path, name,
// auth, timeout), read from api/manifest.tsv — the project's own copy of the
// specification's endpoint list. Routes are registered from it, so an endpoint
// cannot be forgotten, and its timeout is enforced from here.
// api/extensions.tsv lists, in the same form, the endpoints we add beyond the
// specification (jobs, admin jobs, metrics).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type Endpoint = {
  group: string;
  method: HttpMethod;
  /** As in the specification, e.g. `/{site_identifier}/media/{media_id}`. */
  path: string;
  name: string;
  auth: 'bearer' | 'public';
  timeoutMs: number;
  /** `METHOD path`, the key route modules use to claim an endpoint. */
  key: string;
  /** Listed by the specification, or added beyond it (api/extensions.tsv). */
  source: 'spec' | 'extension';
};

export const manifestFile = path.join(import.meta.dirname, 'manifest.tsv');

export function parseManifest(text: string, source: Endpoint['source'] = 'spec'): Endpoint[] {
  const [header, ...lines] = text.trim().split('\n');
  if (header?.trim() !== ['group', 'method', 'path', 'name', 'auth', 'timeout'].join('\t')) {
    throw new Error('manifest.tsv must start with the header: group method path name auth timeout');
  }
  return lines.map((line, index) => {
    const [group, method, routePath, name, auth, timeout] = line.split('\t').map((cell) => cell.trim());
    const where = `manifest.tsv line ${index + 2}`;
    if (!group || !routePath?.startsWith('/') || !name) throw new Error(`${where}: incomplete row`);
    if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method ?? ''))
      throw new Error(`${where}: bad method ${method}`);
    if (auth !== 'bearer' && auth !== 'public') throw new Error(`${where}: auth must be bearer or public`);
    const seconds = /^(\d+)s$/.exec(timeout ?? '');
    if (!seconds) throw new Error(`${where}: timeout must look like 30s`);
    return {
      group,
      method: method as HttpMethod,
      path: routePath,
      name,
      auth,
      timeoutMs: Number(seconds[1]) * 1000,
      key: `${method} ${routePath}`,
      source,
    };
  });
}

export const manifest: Endpoint[] = parseManifest(readFileSync(manifestFile, 'utf8'));

export const extensions: Endpoint[] = parseManifest(
  readFileSync(path.join(import.meta.dirname, 'extensions.tsv'), 'utf8'),
  'extension',
);

/** What the API serves: the specification's endpoints and ours. */
export const allEndpoints: Endpoint[] = [...manifest, ...extensions];

/** `/{site_identifier}/jobs/{job_id}` → `/:site_identifier/jobs/:job_id` (Express 5 syntax). */
export function toExpressPath(specPath: string): string {
  return specPath.replace(/\{([a-z_][a-z0-9_]*)\}/gi, ':$1');
}

export function pathParams(specPath: string): string[] {
  return [...specPath.matchAll(/\{([a-z_][a-z0-9_]*)\}/gi)].map((match) => match[1] as string);
}

/**
 * Registration order: at each segment a literal beats a parameter, so
 * `/admin/jobs` is matched before `/{site_identifier}/jobs`.
 */
export function bySpecificity(a: Endpoint, b: Endpoint): number {
  const left = a.path.split('/');
  const right = b.path.split('/');
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i];
    const y = right[i];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    const xParam = x.startsWith('{');
    const yParam = y.startsWith('{');
    if (xParam !== yParam) return xParam ? 1 : -1;
  }
  return 0;
}
