// The public contact form: a message is validated, checked for spam (a
// honeypot field people never see, too many links, a throwaway address) and
// kept; unless it is spam it is mailed, through the outbox in the same
// transaction, to CONTACT_TO, or else to the site's tenant admins, or else to
// the global admins. Spam is answered like anything else (202), so a bot
// learns nothing from the answer; a throwaway address is refused (422),
// since a person can give another.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import { isDisposable } from '../identity/disposable.ts';
import { queueEmail } from '../mail/outbox.ts';
import { findPublicSite } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { emailAddress } from '../email-address.ts';

/** Not a word that says what it is for: form fillers that fill every field fill it, people never see it. */
export const honeypotField = 'website';

export const contactInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  email: emailAddress(254),
  subject: z.string().trim().min(1).max(200),
  message: z.string().trim().min(1).max(10_000),
  site: z.string().min(1).max(100).optional().describe('The site (id or slug) the form is on; it must be public'),
  [honeypotField]: z.string().max(2000).optional().describe('Leave empty: a field hidden from people, filled by bots'),
});

export type ContactInput = z.output<typeof contactInput>;

export const contactReceiptSchema = z
  .object({ id: z.uuid(), status: z.literal('received') })
  .meta({ id: 'ContactReceipt' });

/** One match per link: a BBCode [url=...] tag, or a URL taken whole (so its www. is not counted again). */
const linkPattern = /\[url=[^\]]*\]|(?:\bhttps?:\/\/|\bwww\.)[^\s<>\]"]+/gi;

/** Why a message is spam; empty when it is not. */
export function spamReasons(input: ContactInput, maxLinks: number): string[] {
  const reasons: string[] = [];
  if (input[honeypotField]?.trim()) reasons.push('honeypot');
  const links = `${input.subject} ${input.message}`.match(linkPattern)?.length ?? 0;
  if (links > maxLinks) reasons.push(`links:${links}`);
  return reasons;
}

async function recipients(db: CommonQueryMethods, config: Config, site: Site | null): Promise<string[]> {
  if (config.contact.to) return [config.contact.to];
  const admins = (who: ReturnType<typeof sql.fragment>) =>
    db.anyFirst(sql.type(z.object({ email: z.string() }))`
      select u.email from users u where u.status = 'active' and ${who} order by u.created_at limit 20`);
  const forSite = site
    ? await admins(
        sql.fragment`exists (select 1 from memberships m where m.user_id = u.id and m.tenant_id = ${site.tenant_id} and m.role = 'admin')`,
      )
    : [];
  // A site whose tenant has no administrator left still reaches someone.
  return [...(forSite.length > 0 ? forSite : await admins(sql.fragment`u.is_global_admin`))];
}

export async function submitContact(
  db: CommonQueryMethods,
  config: Config,
  input: ContactInput,
  client: { ip: string | undefined; userAgent: string | undefined },
): Promise<z.infer<typeof contactReceiptSchema>> {
  if (isDisposable(input.email))
    throw new Problem(422, 'Please use an address you will read: this one is from a throwaway provider.', {
      errors: [{ path: 'body.email', message: 'a disposable address' }],
    });
  const site = input.site ? await findPublicSite(db, input.site) : null;
  if (input.site && !site)
    throw new Problem(422, 'No such public site.', { errors: [{ path: 'body.site', message: 'no such public site' }] });
  const reasons = spamReasons(input, config.contact.maxLinks);
  return db.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into contact_messages (site_id, tenant_id, name, email, subject, message, status, spam_reasons, ip, user_agent)
      values (${site?.id ?? null}, ${site?.tenant_id ?? null}, ${input.name}, ${input.email}, ${input.subject},
        ${input.message}, ${reasons.length > 0 ? 'spam' : 'received'}, ${sql.array(reasons, 'text')},
        ${client.ip ?? null}, ${client.userAgent?.slice(0, 500) ?? null})
      returning id`);
    if (reasons.length === 0)
      for (const to of await recipients(tx, config, site))
        await queueEmail(tx, {
          to,
          kind: 'contact',
          subject: `[Contact${site ? ` · ${site.name}` : ''}] ${input.subject}`,
          text: [
            `From: ${input.name} <${input.email}>`,
            ...(site ? [`Site: ${site.name} (${site.slug})`] : []),
            '',
            input.message,
            '',
            `Reply to ${input.email}; message ${id}.`,
          ].join('\n'),
        });
    return { id, status: 'received' as const };
  });
}
