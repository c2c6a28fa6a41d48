// The admin's session: the token pair from POST /auth/login, renewed through
// POST /auth/refresh-token before the access token expires, for as long as the
// tab stays open.
//
// Where the tokens live, and why: the access token only in this module's
// memory. The refresh token too, while the page is open; it is written to
// sessionStorage (which belongs to this tab alone and dies with it) only as
// the page is hidden for a reload or navigation, and taken out again as soon
// as the next page reads it — within 10 seconds, or never (a reopened tab's
// restored storage is too old). So a reload keeps the admin signed in, nothing
// is kept that outlives the tab, and a tab duplicated while the page is open
// copies no token (two tabs spending one refresh token would revoke the
// session, as a stolen token's reuse does). The API has no httpOnly cookie
// to do this instead.

const storageKey = 'admin-ui.refresh-token';
/** How soon the next page must pick up the token the last one left: a reload takes far less. */
const reloadWithinMs = 10_000;

let access = null;
let refreshToken = null;
let renewTimer = null;
let renewing = null;
const endListeners = [];

export const isSignedIn = () => access !== null;

/** The header every API call sends; also for the streams and files fetched outside api(). */
export const authorization = () => ({ Authorization: `Bearer ${access}` });

/** Calls `listener(message)` when the session ends (signed out, or could not be renewed). */
export function onSessionEnd(listener) {
  endListeners.push(listener);
}

/** Takes the pair of a login or a refresh, and plans the next refresh a little before the access token expires. */
function keep(pair) {
  access = pair.access_token;
  refreshToken = pair.refresh_token;
  clearTimeout(renewTimer);
  // A minute early (a third of the lifetime when that is shorter): a hidden tab's timers may run up to a minute late.
  const lead = Math.min(60, pair.expires_in / 3);
  renewTimer = setTimeout(() => renew().catch(() => undefined), Math.max(1, pair.expires_in - lead) * 1000);
}

function forget() {
  access = null;
  refreshToken = null;
  clearTimeout(renewTimer);
  sessionStorage.removeItem(storageKey);
}

/** Signs in with a password; answers the API's problem detail on failure, else null. */
export async function signIn(username, password) {
  const response = await fetch('/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password, grant_type: 'password' }),
  });
  const body = await response.json();
  if (!response.ok) return body.detail ?? 'Sign-in failed.';
  keep(body);
  return null;
}

/** After a reload: picks up the refresh token the previous page left, if any, and renews with it. */
export async function resume() {
  const saved = sessionStorage.getItem(storageKey);
  sessionStorage.removeItem(storageKey);
  if (!saved) return false;
  // A browser that reopens a closed tab restores its sessionStorage: a token left longer ago than a reload
  // takes is not picked up, so closing the tab signs the admin out however it is reopened.
  let left;
  try {
    left = JSON.parse(saved);
  } catch {
    return false;
  }
  if (typeof left?.token !== 'string' || !(Date.now() - left.leftAt < reloadWithinMs)) return false;
  refreshToken = left.token;
  return renew();
}

/** Exchanges the refresh token for a new pair, once at a time however many callers ask. */
export function renew() {
  renewing ??= (async () => {
    try {
      if (!refreshToken) return false;
      const response = await fetch('/auth/refresh-token', {
        method: 'POST',
        headers: { Authorization: `Bearer ${refreshToken}` },
      });
      if (!response.ok) {
        end('Your session ended; sign in again.');
        return false;
      }
      keep(await response.json());
      return true;
    } finally {
      renewing = null;
    }
  })();
  return renewing;
}

/** Ends the session on the server too (its refresh token stops working), then here. */
export async function signOut() {
  if (access) await fetch('/auth/logout', { method: 'POST', headers: authorization() }).catch(() => undefined);
  end('');
}

function end(message) {
  const was = access !== null || refreshToken !== null;
  forget();
  if (was) for (const listener of endListeners) listener(message);
}

/**
 * A JSON API call with the access token. A 401 (the token expired while the
 * machine slept, say) is answered by one renewal and one more try.
 */
export async function api(path, options = {}) {
  const call = () => fetch(path, { ...options, headers: { ...(options.headers ?? {}), ...authorization() } });
  let response = await call();
  if (response.status === 401 && (await renew())) response = await call();
  if (response.status === 401) {
    end('Your session ended; sign in again.');
    throw new Error('signed out');
  }
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new Error(body?.detail ?? body?.title ?? `HTTP ${response.status}`);
  return body;
}

/** JSON bodies, which every write of the console sends. */
export const send = (path, method, body) =>
  api(path, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

// Leaving the page (a reload, a link): the refresh token waits in this tab's storage for the next page.
addEventListener('pagehide', () => {
  if (refreshToken) sessionStorage.setItem(storageKey, JSON.stringify({ token: refreshToken, leftAt: Date.now() }));
});
// Back from the back-forward cache, this page is alive again and holds the token itself.
addEventListener('pageshow', (event) => {
  if (event.persisted) sessionStorage.removeItem(storageKey);
});
