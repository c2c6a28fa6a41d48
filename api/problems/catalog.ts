// What each problem type the API answers with means: its status, when it
// happens and what to do. A problem's `type` (/problems/validation-failed) is
// a link, and RFC 9457 wants it to lead to this explanation (./pages.ts).
// test/api/problems.test.ts finds every type the code can emit and fails
// until it has an entry here.

export type ProblemPage = {
  /** The last segment of the type: /problems/{name}. */
  name: string;
  status: number;
  title: string;
  /** When it happens. */
  when: string;
  /** What the client (or the operator) can do about it. */
  action: string;
};

const pages: ProblemPage[] = [
  // The types a status has when nothing more specific is said (core/errors.ts).
  {
    name: 'bad-request',
    status: 400,
    title: 'Bad Request',
    when: 'The request cannot be read: malformed JSON, a body that is not in the declared character set, a query parameter that is not what the endpoint takes.',
    action: 'Fix the request as `detail` says; sending it again unchanged gives the same answer.',
  },
  {
    name: 'unauthorized',
    status: 401,
    title: 'Unauthorized',
    when: 'No bearer token was sent, or the token is expired, revoked, malformed or signed for another server. The answer carries `WWW-Authenticate: Bearer`.',
    action:
      'Log in (`POST /auth/login`) or, with an expired access token, refresh it (`POST /auth/refresh-token` with the refresh token as the bearer), then send `Authorization: Bearer <access_token>`.',
  },
  {
    name: 'insufficient-credits',
    status: 402,
    title: 'Insufficient credits',
    when: 'The balance that pays for the request cannot cover its estimated cost (`required` against `available`). `balance` says which one: `user`, the caller’s own credits on the site, which pay for every user’s jobs whatever the tenant’s pool holds; or `tenant`, the tenant’s pool, which pays for service accounts’ jobs. A job reserves its estimate when it is submitted; reserved credits are not available.',
    action:
      'Fund that balance as `funding` says: a user’s credits on a site come from a tenant admin (`POST /{site_identifier}/transactions/credits/allocate-from-tenant`), a global admin (`POST /{site_identifier}/transactions/credits/add`) or a credit package bought with `POST /{site_identifier}/payments/create-checkout-session`; the tenant’s pool from a global admin (`POST /admin/global-cost-settings/tenant-credits/allocate`) or the plan’s monthly credits. Or wait for running jobs to release their reservations, or ask for less. `GET /{site_identifier}/transactions/credits/available` says beforehand which balance pays and what it holds.',
  },
  {
    name: 'forbidden',
    status: 403,
    title: 'Forbidden',
    when: 'The caller is known but may not do this: its role on the site or tenant is too low, a service account lacks the scope, or an author touches what another author made.',
    action:
      'Ask a tenant admin for the role `detail` names, or for every scope `missing_permissions` lists (all at once), or act as someone who has them. Each operation’s description says who may call it (`x-access` in /openapi.json).',
  },
  {
    name: 'not-found',
    status: 404,
    title: 'Not Found',
    when: 'The path names no endpoint, or the resource does not exist or belongs to another tenant (the API never says which).',
    action:
      'Check the ids and the site identifier (its UUID or slug), and that the caller belongs to the right tenant.',
  },
  {
    name: 'method-not-allowed',
    status: 405,
    title: 'Method Not Allowed',
    when: 'The path exists but not with this method. `Allow` lists the methods it has.',
    action: 'Use one of the methods in `Allow`.',
  },
  {
    name: 'conflict',
    status: 409,
    title: 'Conflict',
    when: 'The request contradicts the current state: a slug or e-mail address already taken, a job no longer in a state that allows the action, a change racing another.',
    action:
      'Read the current state, then change the request (another slug, another name) or retry once the other change is done.',
  },
  {
    name: 'precondition-failed',
    status: 412,
    title: 'Precondition Failed',
    when: '`If-Match` named a version (ETag) of the resource that is no longer the current one: someone saved first.',
    action: 'Read the resource again, apply your change to what it now holds, and send it with the new ETag.',
  },
  {
    name: 'payload-too-large',
    status: 413,
    title: 'Payload Too Large',
    when: 'The body is larger than the endpoint allows (`BODY_LIMIT` for JSON and forms, `MEDIA_MAX_UPLOAD_BYTES` for uploads).',
    action: 'Send less: split the request, or compress or shrink the file.',
  },
  {
    name: 'unsupported-media-type',
    status: 415,
    title: 'Unsupported Media Type',
    when: 'The body’s `Content-Type` is not one the endpoint reads (JSON where a form or multipart is expected, or the reverse), or an uploaded file is of a kind the endpoint does not take.',
    action: 'Send the content type the endpoint documents in /openapi.json.',
  },
  {
    name: 'range-not-satisfiable',
    status: 416,
    title: 'Range Not Satisfiable',
    when: 'A `Range` header asked for bytes outside the file; `Content-Range: bytes */<size>` says how large it is.',
    action: 'Ask for a range within the size, or for the whole file.',
  },
  {
    name: 'validation-failed',
    status: 422,
    title: 'Unprocessable Content',
    when: 'The request was read but its content is not valid: a required field missing, a value of the wrong type or out of range, an element that does not fit its content type. `errors` lists each problem with its `path` (e.g. `body.name`).',
    action: 'Correct each field `errors` names; the request body schemas in /openapi.json say what each field takes.',
  },
  {
    name: 'rate-limited',
    status: 429,
    title: 'Too Many Requests',
    when: 'The caller went past a rate limit (per address, per token, per tenant for jobs, or failed logins per account). `Retry-After` says in how many seconds to try again; `RateLimit` and `RateLimit-Policy` say which limit.',
    action: 'Wait `Retry-After` seconds, then retry; spread requests out or batch them.',
  },
  {
    name: 'internal',
    status: 500,
    title: 'Internal Server Error',
    when: 'Something failed on the server that is nobody’s mistake in the request. No details are given; `request_id` names the request in the server’s log.',
    action: 'Retry later; if it persists, report the `request_id` to the operator.',
  },
  {
    name: 'not-implemented',
    status: 501,
    title: 'Not Implemented',
    when: 'Answered by a server for an endpoint of the specification it does not have yet. Every endpoint of this version is built, so it does not answer this.',
    action: 'Use a version of the server that has the endpoint.',
  },
  {
    name: 'bad-gateway',
    status: 502,
    title: 'Bad Gateway',
    when: 'A service the request depends on (the payment provider, a mail server) answered something unusable.',
    action: 'Retry later; if it persists, tell the operator.',
  },
  {
    name: 'unavailable',
    status: 503,
    title: 'Service Unavailable',
    when: 'A dependency of the request is down or not set up, or the server is shutting down.',
    action: 'Retry after `Retry-After` when it is given; otherwise later.',
  },
  {
    name: 'timeout',
    status: 504,
    title: 'Gateway Timeout',
    when: 'The endpoint did not finish within its time limit; its database statement was cancelled, so nothing of it was kept unless `detail` says otherwise.',
    action:
      'Retry, ask for less (a smaller page, a narrower filter), or, for long work, use the job endpoints, which answer at once.',
  },
  {
    name: 'error',
    status: 500,
    title: 'Error',
    when: 'An answer with a status that has no type of its own; `status` and `detail` say what happened.',
    action: 'Act on the status: a 4xx is for the client to change, a 5xx to retry later.',
  },

  // Types of their own, thrown where the domain knows more (core/).
  {
    name: 'invalid-credentials',
    status: 401,
    title: 'Invalid credentials',
    when: 'The login’s `username` (the e-mail address) or `password` is wrong, or the account has no password (it signs in with OAuth).',
    action:
      'Check both; failed attempts count against a limit per account and per address. `POST /auth/password-reset-request` sends a link to reset the password.',
  },
  {
    name: 'invalid-client',
    status: 401,
    title: 'Invalid client',
    when: 'The client-credentials grant (`POST /auth/token`) got a wrong `client_id` or `client_secret`, or the service account is disabled.',
    action:
      'Check the credentials (a secret is shown once; rotate it to get a new one) and that the account is enabled.',
  },
  {
    name: 'invalid-scope',
    status: 400,
    title: 'Invalid scope',
    when: 'The client-credentials grant asked for scopes the service account does not have.',
    action: 'Ask only for the account’s scopes, or have a tenant admin grant it the others.',
  },
  {
    name: 'account-blocked',
    status: 403,
    title: 'Account blocked',
    when: 'The account was blocked by an administrator; it cannot log in.',
    action: 'Ask an administrator to unblock it.',
  },
  {
    name: 'email-not-verified',
    status: 403,
    title: 'E-mail not verified',
    when: 'The account signed up but has not confirmed its e-mail address yet.',
    action: 'Follow the link in the verification e-mail; `POST /auth/signup/resend-verification` sends a new one.',
  },
  {
    name: 'invalid-link',
    status: 400,
    title: 'Invalid link',
    when: 'An e-mail link (verification, password reset, invitation) is invalid, expired or already used.',
    action: 'Ask for a new link.',
  },
  {
    name: 'signup-refused',
    status: 403,
    title: 'Sign-up refused',
    when: 'Sign-up screening refused the request (it looked like many sign-ups from one place or one person).',
    action: 'Contact the operator if this is a mistake.',
  },
  {
    name: 'invalid-oauth-state',
    status: 400,
    title: 'Invalid OAuth state',
    when: 'An OAuth sign-in came back with a state that is unknown, used or expired, or without the cookie of the browser that started it.',
    action: 'Start the sign-in again, in the same browser that finishes it.',
  },
  {
    name: 'oauth-failed',
    status: 400,
    title: 'OAuth sign-in failed',
    when: 'The identity provider refused to exchange the code or to say who signed in.',
    action:
      'Start the sign-in again; if it keeps failing, the provider’s settings (client id, secret, redirect URL) are wrong.',
  },
  {
    name: 'oauth-unverified-email',
    status: 400,
    title: 'Unverified e-mail address',
    when: 'The identity provider did not vouch for the account’s e-mail address (GitHub: no verified primary address).',
    action: 'Verify the address with the provider, or sign up with a password.',
  },
  {
    name: 'idempotency-key-reused',
    status: 422,
    title: 'Idempotency key reused',
    when: 'An `Idempotency-Key` already used by this caller on this endpoint came with a different body. The same key with the same body replays the first answer instead.',
    action: 'Use a new key for a new request.',
  },
  {
    name: 'monthly-limit-exceeded',
    status: 402,
    title: 'Monthly limit exceeded',
    when: 'Granting these credits would take the tenant past its monthly credit limit (`monthly_limit`, `allocated_this_month`, `requested`).',
    action: 'Grant less, wait for the next month, or have a global admin raise the tenant’s limit.',
  },
  {
    name: 'agent-budget-spent',
    status: 402,
    title: 'Agent budget spent',
    when: 'The agent’s (or its owner’s) monthly budget is used up; the answer says which budget, how much was used and when it starts again.',
    action: 'Wait for the reset, or raise the budget.',
  },
  {
    name: 'storage-quota-exceeded',
    status: 413,
    title: 'Storage quota exceeded',
    when: 'Storing the file would take the tenant past its plan’s storage quota (`quota_bytes`, `used_bytes`, `incoming_bytes`). Nothing was kept.',
    action: 'Delete media the tenant no longer needs, or move to a plan with more storage.',
  },
  {
    name: 'media-in-use',
    status: 409,
    title: 'Media in use',
    when: 'The media item is used by elements, pages or posts (`references` lists them).',
    action: 'Remove those uses first, or delete with `force=true` to delete it anyway.',
  },
  {
    name: 'element-in-use',
    status: 409,
    title: 'Element in use',
    when: 'Pages or other elements refer to the element (`references` lists them).',
    action: 'Remove those uses first, or use the force delete, which removes them with it.',
  },
  {
    name: 'content-type-in-use',
    status: 409,
    title: 'Content type in use',
    when: 'Elements of the content type exist, or other types refer to it (`in_use`).',
    action: 'Delete or change those elements and types first.',
  },
  {
    name: 'content-type-conflict',
    status: 409,
    title: 'Content type conflict',
    when: 'Website generation needs a content type whose API id the site already uses for a type with other fields (the job fails with `content_type_conflict`).',
    action: 'Rename or change the site’s type, then generate again.',
  },
  {
    name: 'schema-change-conflict',
    status: 409,
    title: 'Elements do not fit the change',
    when: 'A content type change (a field made required, its type changed, an enum value removed...) would leave existing elements invalid; the answer counts and lists them.',
    action: 'Change those elements first, or make the change additive (a new optional field).',
  },
  {
    name: 'page-cycle',
    status: 409,
    title: 'Move into itself',
    when: 'A page was to move under itself or under one of its own descendants.',
    action: 'Choose a parent outside the page’s own subtree.',
  },
  {
    name: 'page-has-children',
    status: 409,
    title: 'Page has children',
    when: 'A page with child pages was to be deleted (`child_count`).',
    action: 'Delete or move the children first, or delete with `recursive=true`.',
  },
  {
    name: 'checkout-incomplete',
    status: 409,
    title: 'Checkout not complete',
    when: 'A checkout session was confirmed before the payment provider completed it (`checkout_status`).',
    action: 'Finish paying on the checkout page, then confirm again.',
  },
  {
    name: 'event-out-of-order',
    status: 409,
    title: 'Event arrived before what it refers to',
    when: 'A payment provider’s webhook named a payment or plan not known here yet.',
    action: 'None for a client: the provider delivers the event again later (`Retry-After`).',
  },
  {
    name: 'invalid-signature',
    status: 401,
    title: 'Invalid webhook signature',
    when: 'An inbound webhook’s signature is missing, wrong or too old. Repeated failures from one network are rate limited.',
    action: 'Sign with the shared secret the operator configured, over the exact body, with a current timestamp.',
  },
  {
    name: 'payment-provider-error',
    status: 502,
    title: 'Payment provider error',
    when: 'Stripe refused or failed the request (`provider_code`).',
    action: 'Retry later; if it persists, the operator checks the Stripe settings.',
  },
  {
    name: 'payments-not-configured',
    status: 503,
    title: 'Payments not configured',
    when: 'A payment endpoint was called but payments are not set up on this server (`setting` names what is missing, e.g. `STRIPE_SECRET_KEY`).',
    action: 'The operator sets the named setting.',
  },
  {
    name: 'mail-not-configured',
    status: 503,
    title: 'Mail not configured',
    when: 'Sending mail was asked for but `SMTP_URL` is not set.',
    action: 'The operator sets `SMTP_URL`.',
  },
  {
    name: 'smtp-check-failed',
    status: 502,
    title: 'SMTP check failed',
    when: 'The mail server check failed (`stage`: connecting, TLS, authenticating or sending; `code`, `response_code`).',
    action: 'Fix the mail server settings in `SMTP_URL` as the stage suggests.',
  },
  {
    name: 'not-configured',
    status: 503,
    title: 'Not configured',
    when: 'No provider is configured for the capability the request needs (`detail` names the setting, e.g. the provider chain variable).',
    action: 'The operator sets the named variable (see docs/providers.md).',
  },
  {
    name: 'database-unavailable',
    status: 503,
    title: 'Service Unavailable',
    when: 'The database cannot be reached right now (restarting, overloaded, connection lost).',
    action: 'Retry after `Retry-After` seconds.',
  },

  // A URL the caller gave was fetched, or refused (core/net/safe-fetch.ts).
  {
    name: 'url-not-allowed',
    status: 422,
    title: 'URL not allowed',
    when: 'A URL given to the API (an import, a webhook) is not a valid http(s) URL, or is plain http where https is required.',
    action: 'Give a valid `https://` URL; for a local webhook in development, see the setting `detail` names.',
  },
  {
    name: 'address-not-allowed',
    status: 422,
    title: 'Address not allowed',
    when: 'A URL given to the API leads (directly, after DNS or after a redirect) to a private, loopback, link-local or reserved address.',
    action: 'Give a URL on the public internet.',
  },
  {
    name: 'too-many-redirects',
    status: 502,
    title: 'Too many redirects',
    when: 'A URL given to the API redirected too many times.',
    action: 'Give the final URL.',
  },
  {
    name: 'response-too-large',
    status: 413,
    title: 'Response too large',
    when: 'A URL given to the API answered more bytes than allowed.',
    action: 'Give a URL with a smaller answer.',
  },
  {
    name: 'fetch-timeout',
    status: 504,
    title: 'Fetch timed out',
    when: 'A URL given to the API did not answer in time.',
    action: 'Retry later, or give a faster server.',
  },
  {
    name: 'fetch-failed',
    status: 502,
    title: 'Fetch failed',
    when: 'A URL given to the API could not be fetched (the host unknown, the connection refused or cut).',
    action: 'Check the URL and that its server is up.',
  },
];

export const problemPages: ReadonlyMap<string, ProblemPage> = new Map(pages.map((page) => [page.name, page]));
