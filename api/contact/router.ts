// Contact: the public contact form, and the SMTP check behind it.
import { z } from 'zod';
import { contactInput, contactReceiptSchema, submitContact } from '../../core/contact/messages.ts';
import { networkOf } from '../../core/net/client-network.ts';
import { checkSmtp, smtpCheckSchema, smtpStages } from '../../core/mail/smtp-check.ts';
import { problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { emailAddress } from '../../core/email-address.ts';

export const routes = [
  defineRoute({
    key: 'POST /api/contact',
    access: 'public',
    description:
      'Sends a message to the people behind the platform, or behind `site` (a public site). Limited per client IP ' +
      '(RATE_LIMIT_CONTACT_PER_IP per RATE_LIMIT_CONTACT_WINDOW_SECONDS). Kept, and mailed through the outbox to CONTACT_TO, else ' +
      'the site’s tenant admins, else the global admins; a message that looks like spam (the hidden `website` field filled, more ' +
      'than CONTACT_MAX_LINKS links) is kept but not mailed, and answered the same. A throwaway address is refused.',
    request: { body: contactInput },
    responses: {
      202: { description: 'Received', schema: contactReceiptSchema },
      429: problemResponse('Too many messages from this address; try again later', { 'Retry-After': retryAfterHeader }),
    },
    async handler({ body }, { db, services, ip }, { req }) {
      // Per network: an IPv6 client holds a whole /64 to rotate through.
      await services.rateLimits.limit('contact', networkOf(ip).network);
      return {
        status: 202,
        body: await submitContact(db, services.config, body, { ip, userAgent: req.get('user-agent') }),
      };
    },
  }),

  defineRoute({
    key: 'GET /api/contact/test-smtp',
    access: 'global-admin',
    description:
      'Checks the SMTP server of SMTP_URL now (global admins): name resolution, connection, TLS and sign-in, and with ?send_to= ' +
      'sends a test message there. A failure is a 502 naming the stage that failed (' +
      smtpStages.join(', ') +
      ') and the server’s answer; the password is never shown.',
    request: {
      query: z.object({ send_to: emailAddress().optional().describe('Also send a test message to this address') }),
    },
    responses: {
      200: { description: 'The server took the connection (and the message)', schema: smtpCheckSchema },
      502: problemResponse('The check failed; `stage` says where (dns, connect, tls, auth, send)'),
      503: problemResponse('SMTP_URL is not set'),
    },
    async handler({ query }, { services }) {
      return { body: await checkSmtp(services.config, query.send_to) };
    },
  }),
];
