// Throwaway e-mail providers, from the maintained `disposable-email-domains`
// list (about 120k domains), read once on first use. A subdomain of a listed
// domain counts too (x.mailinator.com).
import { createRequire } from 'node:module';

let domains: ReadonlySet<string> | undefined;

function list(): ReadonlySet<string> {
  domains ??= new Set(createRequire(import.meta.url)('disposable-email-domains') as string[]);
  return domains;
}

export function isDisposable(email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const known = list();
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (known.has(labels.slice(i).join('.'))) return true;
  return false;
}
