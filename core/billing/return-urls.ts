// Where Checkout and the billing portal may send a customer back to: the
// site's own domain (a tenant's: any of its sites' domains) or an origin of PAYMENTS_RETURN_ORIGINS, and nowhere
// else, so no one can use our payment pages as an open redirect.
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';

/** Every URL outside the allowed origins, as one 422 naming each field. */
export function checkReturnUrls(
  config: Config,
  domains: readonly string[],
  urls: Record<string, string | undefined>,
): void {
  const allowed = new Set(config.stripe.returnOrigins);
  const own = new Set(domains.map((domain) => domain.toLowerCase()));
  const problems: { path: string; message: string }[] = [];
  for (const [field, value] of Object.entries(urls)) {
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      problems.push({ path: `body.${field}`, message: 'not a URL' });
      continue;
    }
    const onSite = url.protocol === 'https:' && own.has(url.hostname);
    if (!onSite && !allowed.has(url.origin))
      problems.push({
        path: `body.${field}`,
        message: `${url.origin} is neither the site’s domain nor an allowed origin`,
      });
  }
  if (problems.length > 0)
    throw new Problem(422, 'Return URLs must be on the site’s domain or an allowed origin.', { errors: problems });
}
