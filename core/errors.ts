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

const titles: Record<number, [slug: string, title: string]> = {
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
  503: ['unavailable', 'Service Unavailable'],
  504: ['timeout', 'Gateway Timeout'],
};

/** Problem type URIs are relative references, documented under /problems/ in the OpenAPI document. */
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
    super(detail ?? titles[status]?.[1] ?? 'Error');
    const [slug, title] = titles[status] ?? ['error', 'Error'];
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
