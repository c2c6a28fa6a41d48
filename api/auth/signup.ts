// Sign-up, e-mail verification and password reset. All public and rate
// limited; the non-committal answers are identical whatever the address.
import { z } from 'zod';
import {
  confirmPasswordReset,
  requestPasswordReset,
  requestVerificationResend,
  signup,
  verifyEmail,
} from '../../core/signup/signup.ts';
import { password, userSchema } from '../../core/identity/users.ts';
import { tenantSchema } from '../../core/tenancy/tenants.ts';
import { problemResponse, tooManyAttempts } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent } from '../schemas.ts';
import { emailAddress } from '../../core/email-address.ts';

const accepted = z.object({ detail: z.string() }).meta({ id: 'Accepted' });
const email = emailAddress();
const token = z.string().min(10).max(4000);

const invalidLink = problemResponse('The token is invalid, expired or already used, or the body is malformed');

const sentIfExists = 'If the address belongs to an account that needs it, a message is on its way.';

export const routes = [
  defineRoute({
    key: 'POST /auth/signup/',
    access: 'public',
    description:
      'Creates an unverified user and a tenant of their own, which they administer, and e-mails a verification link (24 h, single use). ' +
      'Signing in needs the address verified first. A taken address is a 409. Screened first: a throwaway domain or too many ' +
      'sign-ups from one address or network are refused (403, without saying which); doubtful ones are flagged for review.',
    request: {
      body: z.strictObject({
        email,
        password,
        full_name: z.string().trim().min(1).max(200),
        tenant_name: z.string().trim().min(1).max(200).optional().describe('Default: "<full name>\'s workspace"'),
      }),
    },
    responses: {
      201: {
        description: 'Signed up; check your e-mail',
        schema: z.object({ user: userSchema, tenant: tenantSchema }),
      },
      403: problemResponse('Sign-up refused by the screening (/problems/signup-refused)'),
      409: problemResponse('The address belongs to an account already'),
      429: tooManyAttempts,
    },
    async handler({ body }, { db, services, ip }) {
      await services.rateLimits.hit('signup', ip, body.email);
      return { status: 201, body: await signup(db, services.config, body, { ip }) };
    },
  }),

  defineRoute({
    key: 'POST /auth/signup/verify-email',
    access: 'public',
    description: 'Confirms the address with the token from the e-mail. An invalid, expired or used token is a 400.',
    request: { body: z.strictObject({ token }) },
    responses: { ...noContent('Verified'), 400: invalidLink },
    async handler({ body }, { db, services }) {
      await verifyEmail(db, services.config, body.token);
      return {};
    },
  }),

  defineRoute({
    key: 'POST /auth/signup/resend-verification',
    access: 'public',
    description:
      'Sends a new verification link to an unverified account, from a queued job. Always 202, with the same work ' +
      'done, whether or not the address has one.',
    request: { body: z.strictObject({ email }) },
    responses: { 202: { description: 'Accepted', schema: accepted }, 429: tooManyAttempts },
    async handler({ body }, { db, services, ip }) {
      await services.rateLimits.hit('resend-verification', ip, body.email);
      await requestVerificationResend(db, body.email);
      return { status: 202, body: { detail: sentIfExists } };
    },
  }),

  defineRoute({
    key: 'POST /auth/password-reset-request',
    access: 'public',
    description:
      'E-mails a password reset link (1 h, single use, and only while the password stays as it was) from a queued job. ' +
      'Always 202, with the same work done, whether or not the address has an account.',
    request: { body: z.strictObject({ email }) },
    responses: { 202: { description: 'Accepted', schema: accepted }, 429: tooManyAttempts },
    async handler({ body }, { db, services, ip }) {
      await services.rateLimits.hit('password-reset', ip, body.email);
      await requestPasswordReset(db, body.email);
      return { status: 202, body: { detail: sentIfExists } };
    },
  }),

  defineRoute({
    key: 'POST /auth/password-reset-confirm',
    access: 'public',
    description: 'Sets a new password with the token from the e-mail, and ends every session of the account.',
    request: { body: z.strictObject({ token, new_password: password }) },
    responses: { ...noContent('Password changed'), 400: invalidLink, 429: tooManyAttempts },
    async handler({ body }, { db, services, ip }) {
      await services.rateLimits.hit('password-reset-confirm', ip);
      await confirmPasswordReset(db, services.config, body.token, body.new_password);
      return {};
    },
  }),
];
