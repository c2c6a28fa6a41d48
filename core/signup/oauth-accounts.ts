// Which account an external identity signs into: the one it was linked to,
// else the one with the address the provider vouched for, else a new one
// with a tenant of its own. An account whose address was never confirmed
// may have been registered by anyone, with a password of their choosing, in
// wait for the address's owner: linking it keeps nothing that person set up
// to get in (password, sessions, pending links), as Supabase Auth does with
// unconfirmed identities, and the owner is told.
import { z } from 'zod';
import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { queueEmail } from '../mail/outbox.ts';
import { addMember } from '../tenancy/memberships.ts';
import { insertTenant, workspaceName } from '../tenancy/tenants.ts';
import { revokeAllSessions } from '../identity/sessions.ts';
import { insertUser } from '../identity/users.ts';

export type ExternalIdentity = { subject: string; email: string; name: string };

/** The external identity providers one may sign up and sign in with (./oauth.ts), and their names in mails. */
export const providers = ['google', 'github'] as const;
export type ProviderName = (typeof providers)[number];

const providerNames: Record<ProviderName, string> = { google: 'Google', github: 'GitHub' };

/** Neither linked before nor an address with an account: signing in makes one. */
export async function isNewAccount(db: CommonQueryMethods, provider: ProviderName, identity: ExternalIdentity) {
  return !(await db.exists(sql.type(z.object({}))`
    select 1 from user_identities where provider = ${provider} and subject = ${identity.subject}
    union all select 1 from users where lower(email) = lower(${identity.email})`));
}

const existingAccount = z.object({ id: z.string(), email: z.string(), email_verified: z.boolean() });

/** The user behind an external identity: linked before, found by the address, or new (with a tenant of their own). */
export async function linkIdentity(
  tx: DatabaseTransactionConnection,
  config: Config,
  provider: ProviderName,
  identity: ExternalIdentity,
): Promise<{ userId: string; created: boolean }> {
  const linked = await tx.maybeOneFirst(sql.type(z.object({ user_id: z.string() }))`
    select user_id from user_identities where provider = ${provider} and subject = ${identity.subject}`);
  if (linked) return { userId: linked, created: false };
  const existing = await tx.maybeOne(sql.type(existingAccount)`
    select id, email, email_verified from users where lower(email) = lower(${identity.email}) for update`);
  let userId: string;
  if (existing) {
    if (!existing.email_verified) await claimUnconfirmed(tx, existing.id);
    await queueEmail(tx, linkedEmail(config, provider, existing.email, !existing.email_verified));
    userId = existing.id;
  } else {
    const user = await insertUser(tx, {
      email: identity.email,
      password: '',
      password_hash: null,
      full_name: identity.name.slice(0, 200),
      email_verified: true,
    });
    const tenant = await insertTenant(tx, { name: workspaceName(user.full_name) });
    await addMember(tx, tenant.id, user.id, 'admin');
    userId = user.id;
  }
  await tx.query(sql.typeAlias('void')`
    insert into user_identities (provider, subject, user_id, email) values (${provider}, ${identity.subject}, ${userId}, ${identity.email})`);
  return { userId, created: !existing };
}

/**
 * The provider proved the address; whoever registered the account did not.
 * The address is confirmed now, and what the registrant set up to get in
 * goes: the password, every session, and links not yet followed.
 */
async function claimUnconfirmed(tx: DatabaseTransactionConnection, userId: string): Promise<void> {
  await tx.query(sql.typeAlias('void')`
    update users set email_verified = true, password_hash = null where id = ${userId}`);
  await revokeAllSessions(tx, userId, 'unconfirmed account claimed by the address owner');
  await tx.query(sql.typeAlias('void')`
    update email_tokens set used_at = now() where user_id = ${userId} and used_at is null`);
}

function linkedEmail(config: Config, provider: ProviderName, to: string, claimed: boolean) {
  const name = providerNames[provider];
  const resetUrl = `${config.publicUrl ?? `http://localhost:${config.port}`}/reset-password`;
  const claimedText = claimed
    ? `An account had been registered with this address earlier, but the address was never confirmed, so ` +
      `nobody had shown it was theirs. Signing in with ${name} confirmed it: the password set at that ` +
      `registration has been removed and its sessions ended. To sign in with a password too, choose one ` +
      `through a password reset (${resetUrl}, or POST /auth/password-reset-request).\n\n`
    : '';
  return {
    to,
    kind: 'oauth_linked',
    subject: `Signed in with ${name}`,
    text:
      `Your ${name} account was linked to your account here (${to}), and you can sign in with it from now on.\n\n` +
      claimedText +
      `If this was not you, reset your password and tell us.\n`,
  };
}
