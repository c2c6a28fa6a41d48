// Outgoing e-mail: a row in email_outbox and an email__send job, written in the
// caller's transaction, so a message exists exactly when what it announces does.
// The task then reads the message and records each try (worker/tasks/email__send.ts).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { enqueue } from '../jobs/enqueue.ts';

export type Email = { to: string; subject: string; text: string; kind: string };

export async function queueEmail(db: CommonQueryMethods, email: Email): Promise<string> {
  const id = await db.oneFirst(sql.type(z.object({ id: z.string() }))`
    insert into email_outbox (to_address, subject, text_body, kind)
    values (${email.to}, ${email.subject}, ${email.text}, ${email.kind}) returning id`);
  await enqueue(db, 'email__send', { id });
  return id;
}

const outboxMessageSchema = z.object({
  to_address: z.string(),
  subject: z.string(),
  text_body: z.string(),
  kind: z.string(),
  sent_at: z.string().nullable(),
});

export type OutboxMessage = z.infer<typeof outboxMessageSchema>;

/** The message, or null when it is gone; its sent_at tells a message already sent. */
export async function outboxMessageById(db: CommonQueryMethods, id: string): Promise<OutboxMessage | null> {
  return db.maybeOne(sql.type(outboxMessageSchema)`
    select to_address, subject, text_body, kind, sent_at from email_outbox where id = ${id}`);
}

/** A try that failed: counted, with the transport's words, before the task is retried. */
export async function recordSendFailure(db: CommonQueryMethods, id: string, error: string): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update email_outbox set attempts = attempts + 1, last_error = ${error} where id = ${id}`);
}

/** Sent (or, without SMTP, logged): a later run of the task finds sent_at and sends nothing. */
export async function markSent(db: CommonQueryMethods, id: string, via: 'smtp' | 'log'): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update email_outbox set sent_at = now(), attempts = attempts + 1, last_error = null,
      delivered_via = ${via} where id = ${id}`);
}
