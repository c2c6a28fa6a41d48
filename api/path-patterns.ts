// Which path pattern a request's path is for, whatever its method. The router
// keeps one tree per method, so `PATCH /admin/global-cost-settings/bulk`
// (a path only PUT has) finds `PATCH /admin/global-cost-settings/{setting_id}`
// and would be answered "invalid UUID". A path is for its most specific
// pattern — literal segments win over parameters, as the router itself
// decides within a method — and a method that pattern lacks is a 405 naming
// the methods it has.

/** A registered pattern (`/admin/jobs/:job_id`, lower case) and the methods that have it. */
export type PathPattern = { path: string; methods: string[] };

const segmentsOf = (path: string) => path.toLowerCase().split('/').slice(1);
const isParam = (segment: string) => segment.startsWith(':');

/**
 * Whether `a` is more specific than `b` where both can match the same path:
 * same length, no two different literals in one place, and a literal where
 * the other has a parameter at the first place they differ in kind.
 */
export function moreSpecific(a: string, b: string): boolean {
  const left = segmentsOf(a);
  const right = segmentsOf(b);
  if (left.length !== right.length) return false;
  let decided: boolean | undefined;
  for (let i = 0; i < left.length; i++) {
    const [x, y] = [left[i]!, right[i]!];
    if (!isParam(x) && !isParam(y) && x !== y) return false;
    if (decided === undefined && isParam(x) !== isParam(y)) decided = !isParam(x);
  }
  return decided === true;
}

/** A pattern that can take paths of another, checked segment by segment without the router. */
export type Shadow = PathPattern & { matches(path: string): boolean };

function shadow(pattern: PathPattern): Shadow {
  const segments = segmentsOf(pattern.path);
  return {
    ...pattern,
    matches(path) {
      // Trailing slashes and letter case do not matter to the router either.
      const asked = segmentsOf(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
      return (
        asked.length === segments.length &&
        segments.every((segment, i) => (isParam(segment) ? asked[i] !== '' : asked[i] === segment))
      );
    },
  };
}

/**
 * For each pattern, the patterns of other methods that are more specific and
 * could take a path it matches, most specific first. Most patterns have none,
 * so most requests never look further than their own match.
 */
export function shadowingPatterns(patterns: PathPattern[]): Map<string, Shadow[]> {
  const byPath = new Map<string, Shadow[]>();
  for (const pattern of patterns) {
    const shadows = patterns.filter((other) => moreSpecific(other.path, pattern.path));
    shadows.sort((a, b) => (moreSpecific(a.path, b.path) ? -1 : moreSpecific(b.path, a.path) ? 1 : 0));
    if (shadows.length > 0) byPath.set(pattern.path, shadows.map(shadow));
  }
  return byPath;
}
