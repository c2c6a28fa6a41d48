// Delivers one outbox message: by SMTP when SMTP_URL is set, otherwise to the
// log (local use). A message already sent is skipped, so a retry or a second
// run never sends it twice; an SMTP failure is recorded and retried.
import { z } from 'zod';
import { outboxMessageById, markSent, recordSendFailure } from '../../core/mail/outbox.ts';
import { smtpTransport } from '../../core/mail/transport.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ id: z.uuid() }),
  async run({ id }, { db, config, logger }) {
    const row = await outboxMessageById(db, id);
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
        await recordSendFailure(db, id, (error as Error).message);
        throw error;
      }
    }
    await markSent(db, id, smtpUrl ? 'smtp' : 'log');
  },
});
