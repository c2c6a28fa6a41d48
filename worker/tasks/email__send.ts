// Delivers one outbox message: by SMTP when SMTP_URL is set, otherwise to the
// log (local use). A message already sent is skipped, so a retry or a second
// run never sends it twice; an SMTP failure is recorded and retried.
import { z } from 'zod';
import { smtpTransport } from '../../core/mail/transport.ts';
import { sql } from '../../db/pool.ts';
import { defineTask } from '../task.ts';

const message = z.object({
  to_address: z.string(),
  subject: z.string(),
  text_body: z.string(),
  kind: z.string(),
  sent_at: z.string().nullable(),
});

export default defineTask({
  payload: z.object({ id: z.uuid() }),
  async run({ id }, { db, config, logger }) {
    const row = await db.maybeOne(sql.type(message)`
      select to_address, subject, text_body, kind, sent_at from email_outbox where id = ${id}`);
    if (!row || row.sent_at) return;
    const smtpUrl = config.mail.smtpUrl;
    if (!smtpUrl) {
      logger.info(
        { to: row.to_address, subject: row.subject, kind: row.kind, text: row.text_body },
        'e-mail (no SMTP_URL set; logged instead of sent)',
      );
    } else {
      try {
        await smtpTransport(smtpUrl).sendMail({
          from: config.mail.from,
          to: row.to_address,
          subject: row.subject,
          text: row.text_body,
        });
      } catch (error) {
        await db.query(sql.typeAlias('void')`
          update email_outbox set attempts = attempts + 1, last_error = ${(error as Error).message} where id = ${id}`);
        throw error;
      }
    }
    await db.query(sql.typeAlias('void')`
      update email_outbox set sent_at = now(), attempts = attempts + 1, last_error = null,
        delivered_via = ${smtpUrl ? 'smtp' : 'log'} where id = ${id}`);
  },
});
