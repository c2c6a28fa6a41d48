// RFC 9457 problem details: the one error shape of the API. Domain code throws
// a Problem; the HTTP layer renders it. Anything else becomes a bare 500.

export type ProblemField = { path: string; message: string };

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  errors?: ProblemField[];
  [extension: string]: unknown;
};

/** The type and title of a problem whose thrower names none: one per status (explained in api/problems/catalog.ts). */
export const statusProblems: Record<number, [slug: string, title: string]> = {
  400: ['bad-request', 'Bad Request'],
  401: ['unauthorized', 'Unauthorized'],
  402: ['insufficient-credits', 'Payment Required'],
  403: ['forbidden', 'Forbidden'],
  404: ['not-found', 'Not Found'],
  405: ['method-not-allowed', 'Method Not Allowed'],
  409: ['conflict', 'Conflict'],
  412: ['precondition-failed', 'Precondition Failed'],
  413: ['payload-too-large', 'Payload Too Large'],
  415: ['unsupported-media-type', 'Unsupported Media Type'],
  416: ['range-not-satisfiable', 'Range Not Satisfiable'],
  422: ['validation-failed', 'Unprocessable Content'],
  429: ['rate-limited', 'Too Many Requests'],
  500: ['internal', 'Internal Server Error'],
  501: ['not-implemented', 'Not Implemented'],
  502: ['bad-gateway', 'Bad Gateway'],
  503: ['unavailable', 'Service Unavailable'],
  504: ['timeout', 'Gateway Timeout'],
};

/** Problem type URIs are relative references; GET /problems/{slug} explains each (api/problems/). */
export function problemType(slug: string): string {
  return `/problems/${slug}`;
}

export class Problem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly errors?: ProblemField[];
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    detail?: string,
    options: {
      type?: string;
      title?: string;
      errors?: ProblemField[];
      extensions?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(detail ?? statusProblems[status]?.[1] ?? 'Error');
    const [slug, title] = statusProblems[status] ?? ['error', 'Error'];
    this.name = 'Problem';
    this.status = status;
    this.type = options.type ?? problemType(slug);
    this.title = options.title ?? title;
    if (options.errors) this.errors = options.errors;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }

  toBody(instance?: string): ProblemBody {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.message,
      ...(instance ? { instance } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extensions,
    };
  }
}

export const notFound = (detail = 'The resource does not exist.') => new Problem(404, detail);
export const forbidden = (detail = 'You may not do this.') => new Problem(403, detail);
export const conflict = (detail: string) => new Problem(409, detail);

/** How long a client is asked to wait while the database is away: about what a restart takes. */
export const databaseRetryAfterSeconds = 5;

/** The answer to any request that needed the database while it could not be reached. */
export const databaseUnavailable = () =>
  new Problem(503, 'The database cannot be reached right now; try again shortly.', {
    type: problemType('database-unavailable'),
    headers: { 'Retry-After': String(databaseRetryAfterSeconds) },
  });

// SQLSTATEs of a server going away or not there yet: class 08 (connection
// exception), 53300 (too many connections), 57P01 admin_shutdown, 57P02
// crash_shutdown, 57P03 cannot_connect_now. The rest of class 57 (57014, a
// statement cancelled: our own timeouts) is not the database being away.
const unavailableStates = /^(08...|53300|57P0[123])$/;
// What the operating system says of a connection that cannot be made or was cut.
const unreachable = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
// What node-postgres and slonik say, with no code, of a connection that is lost
// or cannot be had (slonik keeps the driver's error as `cause`, and names its own
// ConnectionError and BackendTerminated errors only by message).
const lostConnection =
  /^(connection terminated|backend has been terminated|timeout exceeded when trying to connect|client has encountered a connection error|client was closed and is not queryable|connection pool is being terminated)/i;

/**
 * Whether `error` (or what caused it) says the database cannot be reached:
 * stopped, restarting, or the connection lost. Such a failure is nobody's
 * mistake and passes: the API answers it with a 503 and Retry-After
 * (databaseUnavailable), never a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const { code, message, errors } of causes(error)) {
    if (typeof code === 'string' && (unavailableStates.test(code) || unreachable.has(code))) return true;
    if (typeof message === 'string' && lostConnection.test(message)) return true;
    // Node reports a refused connection to a name with several addresses as an AggregateError.
    if (Array.isArray(errors) && errors.some(isDatabaseUnavailable)) return true;
  }
  return false;
}

type Cause = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };

/** An error and what caused it, a few levels down (slonik keeps the driver's error as `cause`). */
export function* causes(error: unknown): Generator<Cause> {
  let current = error;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    yield current;
    current = (current as Cause).cause;
  }
}
