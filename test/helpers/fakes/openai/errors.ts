// OpenAI's error answers, as its API sends them. The shape is the reference's
// (openai/openai-openapi, components.schemas.ErrorResponse and Error: `error`
// with message, type, param and code, the last two null when they say nothing);
// the words are OpenAI's own, as users pasted them into issues (each cited).
// Where no one has pasted the exact words, the message says what was wrong in
// OpenAI's style and the comment says "not verified".

export type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };
export type Refusal = { status: number; body: ErrorBody; headers?: Record<string, string> };

export const refusal = (
  status: number,
  message: string,
  {
    type = 'invalid_request_error',
    param = null,
    code = null,
  }: { type?: string; param?: string | null; code?: string | null } = {},
): Refusal => ({ status, body: { error: { message, type, param, code } } });

// ---- authentication (SPEC components.securitySchemes.ApiKeyAuth: bearer) ----

/** No Authorization header. Observed: openai/openai-node#73. */
export const missingKey = () =>
  refusal(
    401,
    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth " +
      "(i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the " +
      'API from your browser and are prompted for a username and password. You can obtain an API key from ' +
      'https://platform.openai.com/account/api-keys.',
  );

/** An Authorization header of another scheme. Observed: openai/openai-cookbook#2347. */
export const notBearer = () => refusal(401, 'Missing bearer or basic authentication in header');

/** A key OpenAI does not know, shown masked. Observed: chatanywhere/GPT_API_free#62. */
export const wrongKey = (key: string) =>
  refusal(
    401,
    `Incorrect API key provided: ${key.slice(0, 5)}***${key.slice(-4)}. ` +
      'You can find your API key at https://platform.openai.com/account/api-keys.',
    { code: 'invalid_api_key' },
  );

// ---- the request body -------------------------------------------------------

/** A body that does not parse as JSON. Observed: ChatGPTNextWeb/NextChat#4064, chatboxai/chatbox#812. */
export const notJson = () =>
  refusal(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library " +
      'correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble ' +
      'figuring out how to fix this, please contact us through our help center at help.openai.com.)',
  );

/** The images endpoints' answer to a key they do not take. Observed: vercel/ai#6102, lofcz/LLMTornado#155. */
export const unknownParameter = (name: string) =>
  refusal(400, `Unknown parameter: '${name}'.`, { param: name, code: 'unknown_parameter' });

/** Chat's (and, not verified, speech's and embeddings') answer to a key it does not take. Observed: davidmigloz/langchain_dart#712. */
export const unrecognizedArgument = (name: string) => refusal(400, `Unrecognized request argument supplied: ${name}`);

/** Observed as a pattern in fakes and clients; the code is not verified. */
export const missingParameter = (name: string) =>
  refusal(400, `Missing required parameter: '${name}'.`, { param: name, code: 'missing_required_parameter' });

const quoted = (values: readonly string[]) =>
  values.length < 2
    ? values.map((value) => `'${value}'`).join('')
    : `${values
        .slice(0, -1)
        .map((value) => `'${value}'`)
        .join(', ')}, and '${values.at(-1)}'`;

/** A value off an enum. Observed: a size (find_string 3536317888), a quality (69662765059). */
export const invalidValue = (param: string, value: unknown, supported: readonly string[]) =>
  refusal(400, `Invalid value: '${String(value)}'. Supported values are: ${quoted(supported)}.`, {
    param,
    code: 'invalid_value',
  });

/** A value of the wrong JSON type. Observed wording (find_string 8405943388); the code is not verified. */
export const invalidType = (param: string, expected: string, value: unknown) =>
  refusal(400, `Invalid type for '${param}': expected ${expected}, but got ${jsonType(value)} instead.`, {
    param,
    code: 'invalid_type',
  });

const jsonType = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'an integer'
          : 'a decimal'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;

/** A number out of its range. Observed: "Invalid 'temperature': decimal above maximum value…" (find_string 52045571239), "Invalid 'n': integer below minimum value…" (68432992283). */
export function outOfRange(param: string, value: number, bounds: { min?: number; max?: number; integer?: boolean }) {
  const kind = bounds.integer ? 'integer' : 'decimal';
  const above = bounds.max !== undefined && value > bounds.max;
  return refusal(
    400,
    above
      ? `Invalid '${param}': ${kind} above maximum value. Expected a value <= ${bounds.max}, but got ${value} instead.`
      : `Invalid '${param}': ${kind} below minimum value. Expected a value >= ${bounds.min}, but got ${value} instead.`,
    { param, code: `${kind}_${above ? 'above_max' : 'below_min'}_value` },
  );
}

/** Observed: code string_above_max_length with "Expected a string with maximum length 64, but got…" (find_string 70190733335). */
export const tooLong = (param: string, max: number, length: number) =>
  refusal(
    400,
    `Invalid '${param}': string too long. Expected a string with maximum length ${max}, but got a string with length ${length} instead.`,
    { param, code: 'string_above_max_length' },
  );

/** The same for arrays; the wording follows the string's, not verified. */
export const tooMany = (param: string, max: number, length: number) =>
  refusal(
    400,
    `Invalid '${param}': array too long. Expected an array with maximum length ${max}, but got an array with length ${length} instead.`,
    { param, code: 'array_above_max_length' },
  );

/** A model the account cannot use. Observed: find_string 71021303058 (OpenAI's, status 404). */
export const modelNotFound = (model: string) =>
  refusal(404, `The model \`${model}\` does not exist or you do not have access to it.`, { code: 'model_not_found' });

// ---- limits and outages -------------------------------------------------------

/**
 * SPEC components.responses.TooManyRequests: an ErrorResponse, with Retry-After
 * in whole seconds (≥ 1) when the server computed a wait. Body observed:
 * openai/openai-dotnet#404 (`type` tokens; requests in openai/codex#797).
 */
export const rateLimited = (retryAfterSeconds?: number): Refusal => ({
  ...refusal(
    429,
    'Rate limit reached for requests in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. ' +
      'Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.',
    { type: 'requests', code: 'rate_limit_exceeded' },
  ),
  ...(retryAfterSeconds === undefined ? {} : { headers: { 'retry-after': String(retryAfterSeconds) } }),
});

/** A spent quota: 429 with no Retry-After, since a person must act (SPEC TooManyRequests). Observed in many fixtures. */
export const quotaExceeded = () =>
  refusal(429, 'You exceeded your current quota, please check your plan and billing details.', {
    type: 'insufficient_quota',
    code: 'insufficient_quota',
  });

/** A 500. Observed widely (e.g. openai/openai-python issues); the exact wording varies. */
export const serverError = () =>
  refusal(500, 'The server had an error while processing your request. Sorry about that!', { type: 'server_error' });
