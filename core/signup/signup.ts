// Self-service accounts: sign-up (a user and a tenant of their own, which they
// administer), e-mail verification, and password reset. The answers to
// "resend" and "reset" never reveal whether an address has an account.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { screenSignup, screenedUser } from '../fraud/screening.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { queueEmail } from '../mail/outbox.ts';
import { addMember } from '../tenancy/memberships.ts';
import { insertTenant, workspaceName, type Tenant } from '../tenancy/tenants.ts';
import { consumeEmailToken, issueEmailToken } from '../identity/email-tokens.ts';
import { hashPassword } from '../identity/password.ts';
import { revokeAllSessions } from '../identity/sessions.ts';
import { insertUser, type User } from '../identity/users.ts';

export type SignupInput = { email: string; password: string; full_name: string; tenant_name?: string | undefined };

const appUrl = (config: Config) => config.publicUrl ?? `http://localhost:${config.port}`;

function verificationEmail(config: Config, to: string, token: string) {
  return {
    to,
    kind: 'email_verification',
    subject: 'Confirm your e-mail address',
    text:
      `Confirm your address to finish signing up:\n\n${appUrl(config)}/verify-email?token=${token}\n\n` +
      `Or send this token to POST /auth/signup/verify-email:\n\ntoken: ${token}\n\nThe link works once, for 24 hours.\n`,
  };
}

/** A new account and its tenant, once the screening (core/fraud/screening.ts) lets the attempt through. */
export async function signup(
  db: CommonQueryMethods,
  config: Config,
  input: SignupInput,
  client: { ip: string | undefined },
): Promise<{ user: User; tenant: Tenant }> {
  const screening = await screenSignup(db, config, { email: input.email, ip: client.ip, via: 'password' });
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const user = await insertUser(tx, { ...input, password_hash: passwordHash, email_verified: false });
    await screenedUser(tx, screening.id, user.id);
    const tenant = await insertTenant(tx, { name: input.tenant_name ?? workspaceName(input.full_name) });
    await addMember(tx, tenant.id, user.id, 'admin');
    const token = await issueEmailToken(tx, config, user.id, 'email_verification');
    await queueEmail(tx, verificationEmail(config, user.email, token));
    return { user, tenant };
  });
}

export async function verifyEmail(db: CommonQueryMethods, config: Config, token: string): Promise<void> {
  await db.transaction(async (tx) => {
    const userId = await consumeEmailToken(tx, config, token, 'email_verification');
    await tx.query(sql.typeAlias('void')`update users set email_verified = true where id = ${userId}`);
  });
}

const account = z.object({ id: z.string(), email: z.string(), email_verified: z.boolean(), status: z.string() });

const findAccount = (db: CommonQueryMethods, email: string) =>
  db.maybeOne(
    sql.type(account)`select id, email, email_verified, status from users where lower(email) = lower(${email})`,
  );

/**
 * Queues a new verification link: one statement whatever the address, as a
 * reset request does (below), so the answer's timing tells nobody whether
 * the address has an account. The job does the rest.
 */
export async function requestVerificationResend(db: CommonQueryMethods, email: string): Promise<void> {
  await enqueue(db, 'email_verification__resend', { email });
}

/** The email_verification__resend job: a new link when the address has an unverified account; otherwise nothing. */
export async function resendVerification(db: CommonQueryMethods, config: Config, email: string): Promise<void> {
  const found = await findAccount(db, email);
  if (!found || found.email_verified || found.status !== 'active') return;
  await db.transaction(async (tx) => {
    const token = await issueEmailToken(tx, config, found.id, 'email_verification');
    await queueEmail(tx, verificationEmail(config, found.email, token));
  });
}

/**
 * Queues the work of a reset request: the same one statement whatever the
 * address, so how long the answer takes says nothing of whether it has an
 * account (before, an account's link and message took twice the time of a
 * miss; bench/password-reset.ts measures it). The job does the rest.
 */
export async function requestPasswordReset(db: CommonQueryMethods, email: string): Promise<void> {
  await enqueue(db, 'password_reset__send', { email });
}

/** The password_reset__send job: mails a reset link when the address has an active account; otherwise does nothing. */
export async function sendPasswordReset(db: CommonQueryMethods, config: Config, email: string): Promise<void> {
  const found = await findAccount(db, email);
  if (!found || found.status !== 'active') return;
  await db.transaction(async (tx) => {
    const token = await issueEmailToken(tx, config, found.id, 'password_reset');
    await queueEmail(tx, {
      to: found.email,
      kind: 'password_reset',
      subject: 'Reset your password',
      text:
        `Someone (hopefully you) asked to reset your password. Choose a new one here:\n\n${appUrl(config)}/reset-password?token=${token}\n\n` +
        `Or send this token with the new password to POST /auth/password-reset-confirm:\n\ntoken: ${token}\n\n` +
        `The link works once, for an hour. If you did not ask, ignore this message.\n`,
    });
  });
}

/** Sets the new password and ends every session: whoever had the old one is out. */
export async function confirmPasswordReset(
  db: CommonQueryMethods,
  config: Config,
  token: string,
  newPassword: string,
): Promise<void> {
  const passwordHash = await hashPassword(newPassword);
  await db.transaction(async (tx) => {
    const userId = await consumeEmailToken(tx, config, token, 'password_reset');
    // Following the link proved control of the address, too.
    await tx.query(
      sql.typeAlias(
        'void',
      )`update users set password_hash = ${passwordHash}, email_verified = true where id = ${userId}`,
    );
    await revokeAllSessions(tx, userId, 'password reset');
  });
}
