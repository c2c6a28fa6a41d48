// Outgoing e-mail: a row in email_outbox and an email__send job, written in the
// caller's transaction, so a message exists exactly when what it announces does.
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
