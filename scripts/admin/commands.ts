// The admin command line's commands. Each parses what it was given with the
// API's own schemas where one exists, then calls the core function the API's
// route calls, as a global admin (core/operators/actor.ts), and answers what
// that route would answer: as JSON with --json, else as a few lines for people.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { UserActor } from '../../core/actor.ts';
import type { Config } from '../../core/config.ts';
import { allocateToTenant } from '../../core/credits/ledger.ts';
import { emailAddress } from '../../core/email-address.ts';
import { bootstrapAdmin } from '../../core/identity/bootstrap.ts';
import { issueEmailToken } from '../../core/identity/email-tokens.ts';
import { confirmPasswordReset } from '../../core/signup/signup.ts';
import {
  createUser,
  findUser,
  password as passwordSchema,
  setGlobalAdmin,
  updateUser,
} from '../../core/identity/users.ts';
import { adminCancelJob, retryJob } from '../../core/jobs/admin.ts';
import { adminJobQuery, listAllJobs } from '../../core/jobs/admin-list.ts';
import { listPauses, pause, resume } from '../../core/jobs/pauses.ts';
import { anyUser, tenantIdFor, userIdFor } from '../../core/operators/actor.ts';
import { instantAs } from '../../core/timestamp.ts';
import { CommandError, UsageError, currentDatabaseUrl, describeMissing } from './database.ts';

export type Values = Record<string, string | boolean | undefined>;

/** What a command is given: its options and arguments, read and checked before any connection. */
export type Input = { config: Config; values: Values; args: string[]; readStdin(): Promise<string> };

/** What it then acts with. */
export type Context = {
  db: CommonQueryMethods;
  config: Config;
  /** The global admin the command acts as (--as, else the first active one). */
  actor(): Promise<UserActor>;
};

export type Action = (context: Context) => Promise<Output>;

export type Output = { json: unknown; text: string };

type Option = { type: 'string' | 'boolean'; help: string; value?: string };

export type Command = {
  usage: string;
  summary: string;
  /** Positional arguments: their count is checked before anything runs. */
  args: string[];
  options: Record<string, Option>;
  /** Checks the input (a bad one is a UsageError) and answers the action, or the output at once for a command that needs no database. */
  prepare(input: Input): Promise<Action | Output>;
};

/** Parses a value with a schema; a bad one is a usage error naming the option. */
function parsed<T extends z.ZodType>(schema: T, value: unknown, name: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((issue) =>
      issue.path.length
        ? `${issue.path.join('.').replaceAll('_', '-')}: ${issue.message}`
        : `${name}: ${issue.message}`,
    );
    throw new UsageError(issues.join('; '));
  }
  return result.data;
}

const text = (values: Values, name: string) => (typeof values[name] === 'string' ? values[name] : undefined);

/** --password, --password-stdin, or a generated one that is printed (never asked for twice on a terminal). */
async function newPassword(input: Input): Promise<{ value: string; generated: boolean }> {
  const given = text(input.values, 'password');
  if (given !== undefined && input.values['password-stdin'])
    throw new UsageError('give either --password or --password-stdin, not both');
  const raw = input.values['password-stdin'] ? (await input.readStdin()).split(/\r?\n/)[0] : given;
  if (raw === undefined) return { value: randomBytes(15).toString('base64url'), generated: true };
  return { value: parsed(passwordSchema, raw, 'password'), generated: false };
}

const passwordOptions: Record<string, Option> = {
  password: {
    type: 'string',
    value: 'PASSWORD',
    help: 'The password (visible to other users of this machine: prefer --password-stdin)',
  },
  'password-stdin': { type: 'boolean', help: 'Read the password from the first line of standard input' },
};

const shownPassword = (password: { value: string; generated: boolean }) =>
  password.generated ? `\nPassword (generated, shown once): ${password.value}` : '';

const createAdmin: Command = {
  usage: 'create-admin <email> [--name NAME] [--password PASSWORD | --password-stdin]',
  summary: 'Create a global administrator (without a password option one is generated and printed)',
  args: ['email'],
  options: { name: { type: 'string', value: 'NAME', help: 'Full name (default: Administrator)' }, ...passwordOptions },
  async prepare(input) {
    const email = parsed(emailAddress(), input.args[0], 'email');
    const fullName = parsed(z.string().trim().min(1).max(200), text(input.values, 'name') ?? 'Administrator', 'name');
    const password = await newPassword(input);
    return async (context) => {
      const { db } = context;
      // An empty installation gets its first admin as `npm start` makes it; otherwise an admin creates one, as the API does.
      let id = (await anyUser(db)) ? null : await bootstrapAdmin(db, { email, password: password.value });
      if (id && fullName !== 'Administrator') await updateUser(db, await context.actor(), id, { full_name: fullName });
      if (!id) {
        const actor = await context.actor();
        id = await db.transaction(async (tx) => {
          const user = await createUser(tx, actor, { email, password: password.value, full_name: fullName });
          return (await setGlobalAdmin(tx, actor, user.id, true)).id;
        });
      }
      const user = (await findUser(db, id))!;
      return {
        json: { user, ...(password.generated && { password: password.value }) },
        text: `Created global administrator ${user.email} (${user.id}).${shownPassword(password)}`,
      };
    };
  },
};

const resetPassword: Command = {
  usage: 'reset-password <user> [--password PASSWORD | --password-stdin]',
  summary: 'Set a user’s password (by id or e-mail address) and end their sessions',
  args: ['user'],
  options: passwordOptions,
  async prepare(input) {
    const who = parsed(z.string().trim().min(1).max(320), input.args[0], 'user');
    const password = await newPassword(input);
    return async ({ db, config }) => {
      const userId = await userIdFor(db, who);
      // The API's reset-by-link, with the link's token made here: it works for any user (an admin's own
      // password too, which PATCH /users/{id} would want the current one for), marks the address
      // verified and ends every session.
      const token = await issueEmailToken(db, config, userId, 'password_reset');
      await confirmPasswordReset(db, config, token, password.value);
      const user = (await findUser(db, userId))!;
      return {
        json: { user, ...(password.generated && { password: password.value }) },
        text: `Password of ${user.email} reset; their sessions are ended.${shownPassword(password)}`,
      };
    };
  },
};

const grantCredits: Command = {
  usage: 'grant-credits <tenant> <amount> [--reason TEXT] [--expires-at INSTANT]',
  summary: 'Add credits to a tenant’s pool (tenant by id or slug), from outside the system',
  args: ['tenant', 'amount'],
  options: {
    reason: { type: 'string', value: 'TEXT', help: 'Why, recorded in the ledger' },
    'expires-at': { type: 'string', value: 'INSTANT', help: 'When the unspent rest expires (ISO 8601)' },
  },
  async prepare(input) {
    const tenant = parsed(z.string().trim().min(1).max(200), input.args[0], 'tenant');
    const amount = parsed(z.coerce.number().int().min(1).max(1_000_000_000), input.args[1], 'amount');
    const reason = parsed(
      z.string().trim().max(500),
      text(input.values, 'reason') ?? 'Granted from the admin command line',
      'reason',
    );
    const expiresAt = parsed(instantAs('expiry').optional(), text(input.values, 'expires-at'), 'expires-at');
    return async (context) => {
      const { db } = context;
      const tenantId = await tenantIdFor(db, tenant);
      const credits = await allocateToTenant(db, await context.actor(), { tenantId, amount, reason, expiresAt });
      return {
        json: credits,
        text: `Granted ${amount} credits to tenant ${tenantId}. Pool: balance ${credits.pool.balance}, reserved ${credits.pool.reserved}, available ${credits.pool.available}.`,
      };
    };
  },
};

const listOptions: Record<string, [string, Option]> = {
  status: [
    'status',
    { type: 'string', value: 'STATE', help: 'queued, running, waiting, succeeded, failed or canceled' },
  ],
  kind: ['kind', { type: 'string', value: 'KIND', help: 'A kind of job (video, image, ...)' }],
  tenant: ['tenant', { type: 'string', value: 'TENANT', help: 'A tenant’s id, or part of its name or slug' }],
  site: ['site', { type: 'string', value: 'SITE', help: 'A site’s id or slug' }],
  user: ['user_id', { type: 'string', value: 'USER_ID', help: 'The user who submitted them' }],
  'max-age-hours': ['max_age_hours', { type: 'string', value: 'N', help: 'Only jobs created in the last N hours' }],
  'error-code': ['error_code', { type: 'string', value: 'CODE', help: 'Only jobs whose error has this code' }],
  limit: ['limit', { type: 'string', value: 'N', help: 'How many (default 50, at most 200)' }],
  cursor: ['cursor', { type: 'string', value: 'CURSOR', help: 'The next page, as the previous one printed' }],
};

const listJobs: Command = {
  usage: 'jobs [filters] [--oldest-first] [--total]',
  summary: 'List every tenant’s jobs, newest first, with the admin list’s filters',
  args: [],
  options: {
    ...Object.fromEntries(Object.entries(listOptions).map(([name, [, option]]) => [name, option])),
    'oldest-first': { type: 'boolean', help: 'Oldest first instead' },
    total: { type: 'boolean', help: 'Count all that match, too' },
  },
  async prepare(input) {
    const given = Object.entries(listOptions).flatMap(([name, [field]]) =>
      input.values[name] === undefined ? [] : [[field, input.values[name]]],
    );
    const query = parsed(
      adminJobQuery,
      {
        ...Object.fromEntries(given),
        sort: input.values['oldest-first'] ? 'created_at' : '-created_at',
        ...(input.values.total && { include_total: 'true' }),
      },
      'filters',
    );
    return async (context) => {
      const page = await listAllJobs(context.db, await context.actor(), query);
      const lines = page.items.map((job) =>
        [
          job.id,
          job.created_at,
          job.status.padEnd(9),
          job.kind.padEnd(14),
          `${Math.round(job.progress * 100)}%`.padStart(4),
          `${job.tenant_name}/${job.site_slug}`,
          job.error ? `${job.error.code}: ${job.error.message}` : '',
        ]
          .join('  ')
          .trimEnd(),
      );
      const footer = [
        page.items.length === 0 ? 'No jobs match.' : `${page.items.length} shown.`,
        ...(page.total !== undefined ? [`${page.total} in all.`] : []),
        ...(page.next_cursor ? [`Next page: --cursor ${page.next_cursor}`] : []),
      ];
      return { json: page, text: [...lines, footer.join(' ')].join('\n') };
    };
  },
};

const jobId = (input: Input) => parsed(z.uuid('not a job id'), input.args[0], 'job');

const retry: Command = {
  usage: 'retry <job-id>',
  summary: 'Run a failed job again (its credits are reserved again)',
  args: ['job-id'],
  options: {},
  async prepare(input) {
    const id = jobId(input);
    return async (context) => {
      const job = await retryJob(context.db, context.config, await context.actor(), id);
      return { json: job, text: `Job ${job.id} (${job.kind}) is queued again.` };
    };
  },
};

const cancel: Command = {
  usage: 'cancel <job-id>',
  summary: 'Cancel a job that has not finished (its reserved credits are released)',
  args: ['job-id'],
  options: {},
  async prepare(input) {
    const id = jobId(input);
    return async (context) => {
      const job = await adminCancelJob(context.db, await context.actor(), id);
      return { json: job, text: `Job ${job.id} (${job.kind}) is canceled.` };
    };
  },
};

const kindArg = (input: Input) =>
  parsed(
    z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'not a kind of job')
      .max(50),
    input.args[0],
    'kind',
  );

const pauseKind: Command = {
  usage: 'pause <kind> [--reason TEXT]',
  summary: 'Pause a kind of job: queued ones wait, running ones finish',
  args: ['kind'],
  options: { reason: { type: 'string', value: 'TEXT', help: 'Why, for the other admins' } },
  async prepare(input) {
    const kind = kindArg(input);
    const reason = parsed(z.string().max(500), text(input.values, 'reason') ?? '', 'reason');
    return async (context) => {
      const paused = await pause(context.db, await context.actor(), { kind }, reason);
      return { json: paused, text: `${paused.kind} jobs are paused.` };
    };
  },
};

const resumeKind: Command = {
  usage: 'resume <kind>',
  summary: 'Resume a paused kind of job',
  args: ['kind'],
  options: {},
  async prepare(input) {
    const kind = kindArg(input);
    return async (context) => {
      await resume(context.db, await context.actor(), { kind });
      return { json: { kind, resumed: true }, text: `${kind} jobs run again.` };
    };
  },
};

const pauses: Command = {
  usage: 'pauses',
  summary: 'List the paused kinds and tenants',
  args: [],
  options: {},
  async prepare() {
    return async (context) => {
      const all = await listPauses(context.db, await context.actor());
      const lines = [
        ...all.kinds.map((p) => `kind ${p.kind}  since ${p.paused_at}${p.reason ? `  ${p.reason}` : ''}`),
        ...all.tenants.map((p) => `tenant ${p.tenant_id}  since ${p.paused_at}${p.reason ? `  ${p.reason}` : ''}`),
      ];
      return { json: all, text: lines.length ? lines.join('\n') : 'Nothing is paused.' };
    };
  },
};

const databaseUrl: Command = {
  usage: 'database-url',
  summary: 'Print the URL of the database: DATABASE_URL, or the embedded server a running `npm start` keeps',
  args: [],
  options: {},
  async prepare({ config }) {
    const current = currentDatabaseUrl(config);
    // Only a running server's: one started here would stop as this command ends, and its URL with it.
    if (!current) throw new CommandError(describeMissing(config));
    return { json: current, text: current.url };
  },
};

export const commands: Record<string, Command> = {
  'create-admin': createAdmin,
  'reset-password': resetPassword,
  'grant-credits': grantCredits,
  jobs: listJobs,
  retry,
  cancel,
  pause: pauseKind,
  resume: resumeKind,
  pauses,
  'database-url': databaseUrl,
};
