// Who is calling: a signed-in user (with a session) or a service account
// (limited to its tenant and scopes). Every domain function takes one.
export type UserActor = {
  kind: 'user';
  userId: string;
  sessionId: string;
  isGlobalAdmin: boolean;
  /** Set when the caller presented an API key instead of a token: what the key narrows them to. */
  apiKey?: ApiKeyLimits;
};

export type ServiceActor = {
  kind: 'service';
  serviceAccountId: string;
  tenantId: string;
  scopes: string[];
  /** A test account's jobs run on the local stand-ins at no charge (core/jobs/test-mode.ts). */
  testMode?: boolean;
  /** Set when the caller presented an API key: `scopes` above are then the key's and the account's both. */
  apiKey?: ApiKeyLimits;
};

/**
 * An API key (core/identity/api-keys.ts) acts as its holder, but only in the
 * key's tenant, with the key's scopes, on the key's sites (null: every site
 * of the tenant the holder reaches).
 */
export type ApiKeyLimits = { id: string; tenantId: string; scopes: string[]; siteIds: string[] | null };

export type Actor = UserActor | ServiceActor;

/** The id recorded as who did something: the user's, or the service account's. */
export const actorId = (actor: Actor): string => (actor.kind === 'user' ? actor.userId : actor.serviceAccountId);

/** The user behind a change, for `created_by` columns that reference users: null for a service account. */
export const actorUserId = (actor: Actor): string | null => (actor.kind === 'user' ? actor.userId : null);
