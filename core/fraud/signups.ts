// The screening's record, for global admins: the sign-ups it refused and the
// ones it let through with doubts, with the account each one made.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import { instant, timestamp } from '../timestamp.ts';

export const screenedSignupSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    email_canonical: z.string().describe('Lower case, without +tag; Gmail without dots'),
    ip: z.string().nullable(),
    network: z.string().nullable().describe('The IPv4 address, or the IPv6 /64'),
    via: z.enum(['password', 'google', 'github']),
    outcome: z.enum(['allowed', 'flagged', 'blocked']),
    reasons: z
      .array(z.string())
      .describe(
        'Refused: disposable_domain, ip_limit, network_limit. Flagged: canonical_duplicate, similar_burst, busy_network',
      ),
    score: z.number().int(),
    user: z.object({ id: z.uuid(), email: z.string(), status: z.string() }).nullable().describe('The account it made'),
    created_at: timestamp,
  })
  .meta({ id: 'ScreenedSignup' });

export const screeningQuery = pageQuery.extend({
  reason: z.string().max(50).optional(),
  network: z.string().max(100).optional().describe('An IPv4 address or an IPv6 /64 as listed'),
  from: instant.optional(),
  to: instant.optional(),
});

export async function listScreenings(
  db: CommonQueryMethods,
  outcome: 'blocked' | 'flagged',
  query: z.output<typeof screeningQuery>,
) {
  const where = sql.fragment`s.outcome = ${outcome}
    and ${query.reason ? sql.fragment`${query.reason} = any(s.reasons)` : sql.fragment`true`}
    and ${query.network ? sql.fragment`s.network = ${query.network}` : sql.fragment`true`}
    and ${query.from ? sql.fragment`s.created_at >= ${query.from}` : sql.fragment`true`}
    and ${query.to ? sql.fragment`s.created_at < ${query.to}` : sql.fragment`true`}`;
  const rows = await db.any(sql.type(screenedSignupSchema)`
    select s.id, s.email, s.email_canonical, s.ip, s.network, s.via, s.outcome, s.reasons, s.score,
      case when u.id is null then null else jsonb_build_object('id', u.id, 'email', u.email, 'status', u.status) end as user,
      s.created_at
    from signup_screenings s left join users u on u.id = s.user_id
    where ${where} and ${after(query, 's')}
    order by s.created_at, s.id limit ${query.limit + 1}`);
  return toPage(rows, query, () => countOf(db, sql.fragment`select 1 from signup_screenings s where ${where}`));
}
