// Sign-up screening, before anything is created (password and OAuth sign-up
// alike). Refused outright: a throwaway domain, too many sign-ups from one
// address or one network in the window. Allowed but flagged, with its
// reasons: a score from an address whose canonical form (canonical_email in
// SQL) already has an account, and a burst of similar addresses from one
// network. Every attempt is recorded, so the limits count them and the
// admin lists show them. A refusal is answered neutrally (403), without
// saying which rule it met.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, problemType } from '../errors.ts';
import { isDisposable } from '../identity/disposable.ts';
import { networkOf } from '../net/client-network.ts';

export type SignupVia = 'password' | 'google' | 'github';

export type Screening = { id: string; outcome: 'allowed' | 'flagged'; reasons: string[]; score: number };

/** What each doubt weighs; a sign-up whose doubts reach SIGNUP_FLAG_SCORE is flagged. */
const weights = { canonical_duplicate: 60, similar_burst: 40, busy_network: 20 } as const;

const refused = () =>
  new Problem(403, 'We could not create an account with these details. If you think this is a mistake, contact us.', {
    type: problemType('signup-refused'),
    title: 'Sign-up refused',
  });

const counts = z.object({
  canonical: z.string(),
  from_ip: z.number(),
  from_network: z.number(),
  similar: z.number(),
  canonical_taken: z.boolean(),
});

export async function screenSignup(
  db: CommonQueryMethods,
  config: Config,
  attempt: { email: string; ip: string | undefined; via: SignupVia },
): Promise<Screening> {
  const limits = config.signupScreening;
  const { ip, network } = networkOf(attempt.ip);
  const outcome = await db.transaction(async (tx) => {
    // One screening at a time per network, so two at once cannot both pass a limit, and per
    // mailbox, so two spellings of one at once are still seen; always in this order.
    await tx.query(sql.typeAlias('void')`
      select from pg_advisory_xact_lock(hashtext(${`signup:${network}`})) as by_network,
                  pg_advisory_xact_lock(hashtext('signup-mailbox:' || canonical_email(${attempt.email}))) as by_mailbox`);
    const window = sql.fragment`now() - make_interval(secs => ${limits.windowSeconds})`;
    const burst = sql.fragment`now() - make_interval(secs => ${limits.burstSeconds})`;
    // The shape of an address: its canonical form with the digits taken out (ann1@x, ann2@x → ann@x).
    const shape = (column: ReturnType<typeof sql.fragment>) =>
      sql.fragment`regexp_replace(${column}, '[0-9]+', '', 'g')`;
    const seen = await tx.one(sql.type(counts)`
      select canonical_email(${attempt.email}) as canonical,
        (select count(*)::int from signup_screenings where ip = ${ip} and created_at > ${window}) as from_ip,
        (select count(*)::int from signup_screenings where network = ${network} and created_at > ${window}) as from_network,
        (select count(*)::int from signup_screenings s where s.network = ${network} and s.created_at > ${burst}
           and s.outcome <> 'blocked'
           and ${shape(sql.fragment`s.email_canonical`)} = ${shape(sql.fragment`canonical_email(${attempt.email})`)}) as similar,
        exists (select 1 from users where email_canonical = canonical_email(${attempt.email})
                  and lower(email) <> lower(${attempt.email}))
          -- Or another spelling let through a moment ago, whose account may not exist yet.
          or exists (select 1 from signup_screenings where email_canonical = canonical_email(${attempt.email})
                  and lower(email) <> lower(${attempt.email}) and outcome <> 'blocked' and created_at > ${window})
          as canonical_taken`);
    const blocked = [
      ...(isDisposable(attempt.email) ? ['disposable_domain'] : []),
      ...(seen.from_ip >= limits.perIp ? ['ip_limit'] : []),
      ...(seen.from_network >= limits.perNetwork ? ['network_limit'] : []),
    ];
    const doubts = [
      ...(seen.canonical_taken ? (['canonical_duplicate'] as const) : []),
      ...(seen.similar + 1 >= limits.burstCount ? (['similar_burst'] as const) : []),
      ...(seen.from_network * 2 >= limits.perNetwork ? (['busy_network'] as const) : []),
    ];
    const score = doubts.reduce((total, doubt) => total + weights[doubt], 0);
    const decided =
      blocked.length > 0
        ? { outcome: 'blocked' as const, reasons: blocked }
        : { outcome: score >= limits.flagScore ? ('flagged' as const) : ('allowed' as const), reasons: [...doubts] };
    const id = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into signup_screenings (email, email_canonical, ip, network, via, outcome, reasons, score)
      values (${attempt.email}, ${seen.canonical}, ${ip}, ${network}, ${attempt.via}, ${decided.outcome},
        ${sql.array(decided.reasons, 'text')}, ${score})
      returning id`);
    return { id, score, ...decided };
  });
  if (outcome.outcome === 'blocked') throw refused();
  return outcome;
}

/** The account a screened sign-up made. */
export async function screenedUser(db: CommonQueryMethods, screeningId: string, userId: string): Promise<void> {
  await db.query(sql.typeAlias('void')`update signup_screenings set user_id = ${userId} where id = ${screeningId}`);
}
