// `npm run admin -- <command>`: what an operator does without the API and a
// token — create an admin, reset a password, grant credits, list, retry and
// cancel jobs, pause and resume kinds, find the database. Configured by the
// environment as the service is (core/config.ts). Each command calls the core
// function the API's route calls (./admin/commands.ts). Exit codes: 0 done, 1
// the command failed (the reason on stderr), 2 it was called wrongly.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { loadConfig, type Config } from '../core/config.ts';
import { Problem } from '../core/errors.ts';
import { createPool } from '../db/pool.ts';
import { operatorActor } from '../core/operators/actor.ts';
import { commands, type Command, type Output, type Values } from './admin/commands.ts';
import { UsageError, reachDatabase } from './admin/database.ts';

const globalOptions = {
  json: { type: 'boolean', help: 'Print the result as JSON (for scripts)' },
  as: { type: 'string', value: 'EMAIL', help: 'The global admin to act as (default: the first active one)' },
  help: { type: 'boolean', help: 'Show help' },
} as const;

function help(command?: [string, Command]): string {
  const options = (all: Record<string, { value?: string; help: string }>) =>
    Object.entries(all).map(
      ([name, option]) => `  --${`${name}${option.value ? ` ${option.value}` : ''}`.padEnd(26)} ${option.help}`,
    );
  if (command) {
    const [, spec] = command;
    return [
      `Usage: npm run admin -- ${spec.usage}`,
      '',
      spec.summary,
      '',
      'Options:',
      ...options({ ...spec.options, ...globalOptions }),
    ].join('\n');
  }
  return [
    'Usage: npm run admin -- <command> [arguments] [--json] [--as EMAIL]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, spec]) => `  ${name.padEnd(16)} ${spec.summary}`),
    '',
    'Options for every command:',
    ...options(globalOptions),
    '',
    'The database is DATABASE_URL, or the embedded one under DATA_DIR (as for npm start).',
    'npm run admin -- <command> --help shows a command’s arguments and options.',
  ].join('\n');
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => (data += chunk));
    process.stdin.on('end', () => resolve(data));
    process.stdin.on('error', reject);
  });
}

/** The command and its parsed arguments; a UsageError for anything wrong with them. */
function parseCommandLine(argv: string[]) {
  const name = argv[0];
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const about = argv[1] !== undefined && name === 'help' ? argv[1] : undefined;
    if (about !== undefined && !commands[about]) throw new UsageError(`unknown command: ${about}`);
    return { help: help(about !== undefined ? [about, commands[about]!] : undefined), missing: name === undefined };
  }
  const spec = commands[name];
  if (!spec) throw new UsageError(`unknown command: ${name}`);
  const options: ParseArgsOptionsConfig = Object.fromEntries(
    Object.entries({ ...spec.options, ...globalOptions }).map(([key, option]) => [key, { type: option.type }]),
  );
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv.slice(1), options, allowPositionals: true, strict: true }) as {
      values: Values;
      positionals: string[];
    });
  } catch (error) {
    throw new UsageError((error as Error).message.split('. To specify')[0]!.split('\n')[0]);
  }
  if (values.help) return { help: help([name, spec]) };
  if (positionals.length !== spec.args.length) {
    const expected = spec.args.length ? spec.args.map((arg) => `<${arg}>`).join(' ') : 'no arguments';
    throw new UsageError(`${name} takes ${expected}; got ${positionals.length ? positionals.join(' ') : 'none'}`);
  }
  return { name, spec, values, positionals };
}

async function run(config: Config, spec: Command, values: Values, args: string[]): Promise<Output> {
  const prepared = await spec.prepare({ config, values, args, readStdin });
  if (typeof prepared !== 'function') return prepared;
  const reached = await reachDatabase(config);
  try {
    const db = await createPool(reached.url, {
      maxPoolSize: 2,
      applicationName: 'admin-cli',
      role: config.databaseAppRole,
    });
    try {
      const as = typeof values.as === 'string' ? values.as : undefined;
      return await prepared({ config, db, actor: () => operatorActor(db, as) });
    } finally {
      await db.end();
    }
  } finally {
    await reached.stop();
  }
}

const json = process.argv.includes('--json');

function fail(code: 1 | 2, message: string, extra: Record<string, unknown> = {}): never {
  process.stderr.write(json ? `${JSON.stringify({ error: message, ...extra })}\n` : `error: ${message}\n`);
  if (code === 2 && !json) process.stderr.write('Run `npm run admin -- --help` for the commands.\n');
  process.exit(code);
}

try {
  const line = parseCommandLine(process.argv.slice(2));
  if ('help' in line && line.help !== undefined) {
    // Asked for, it is the answer; with no command at all, it is the usage error's explanation.
    (line.missing ? process.stderr : process.stdout).write(`${line.help}\n`);
    process.exit(line.missing ? 2 : 0);
  }
  const { spec, values, positionals } = line;
  const config = loadConfig();
  const output = await run(config, spec, values, positionals);
  process.stdout.write(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
  process.exit(0);
} catch (error) {
  if (error instanceof UsageError) fail(2, error.message);
  if (error instanceof Problem) fail(1, error.message, { status: error.status });
  if (error instanceof Error && ['ConfigError', 'CommandError', 'MigrationError'].includes(error.name))
    fail(1, error.message);
  // Anything else (the database unreachable, a bug): its message alone; a stack trace is for the service's logs.
  const message =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  fail(1, message || 'failed without a message');
}
