// The admin page's script: signs in, then reads and acts through the same
// JSON API as any client. The access token lives only in this module's
// memory (never in the URL, cookies or storage that outlives the tab), and
// every call sends it as a bearer header. The open job's events are read
// with fetch() rather than EventSource, which cannot send that header.

let token = null;
let openJob = null;
let events = null;
let refreshing = null;
/**
 * The cursors of the pages read so far, newest first: the last is the page
 * shown (null: the first). Each refresh reads that page again, so a job that
 * arrives meanwhile lands on the first page rather than shifting this one.
 */
let cursors = [null];
const pageSize = 50;

const $ = (selector) => document.querySelector(selector);

/** A table cell or other element with text only: nothing from the API is ever parsed as HTML. */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : el('td', cell));
  return tr;
}

function fill(tableSelector, rows) {
  $(`${tableSelector} tbody`).replaceChildren(...rows);
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');
const age = (seconds) =>
  seconds < 90
    ? `${Math.round(seconds)} s`
    : seconds < 5400
      ? `${Math.round(seconds / 60)} min`
      : `${(seconds / 3600).toFixed(1)} h`;

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { ...(options.headers ?? {}), Authorization: `Bearer ${token}` },
  });
  if (response.status === 401) {
    signOut('Your session ended; sign in again.');
    throw new Error('signed out');
  }
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new Error(body?.detail ?? body?.title ?? `HTTP ${response.status}`);
  return body;
}

async function signIn(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  $('#sign-in-error').textContent = '';
  const response = await fetch('/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      username: form.get('username'),
      password: form.get('password'),
      grant_type: 'password',
    }),
  });
  const body = await response.json();
  if (!response.ok) {
    $('#sign-in-error').textContent = body.detail ?? 'Sign-in failed.';
    return;
  }
  token = body.access_token;
  try {
    const me = await api('/auth/currentuser');
    await api('/admin/jobs/stats');
    $('#who').textContent = me.email ?? '';
  } catch (error) {
    token = null;
    $('#sign-in-error').textContent = `This page is for global administrators (${error.message}).`;
    return;
  }
  event.target.reset();
  $('#sign-in').hidden = true;
  $('#console').hidden = false;
  $('#sign-out').hidden = false;
  await refresh();
  refreshing = setInterval(() => refresh().catch(() => undefined), 5000);
}

function signOut(message = '') {
  token = null;
  openJob = null;
  events?.abort();
  clearInterval(refreshing);
  cursors = [null];
  $('#console').hidden = true;
  $('#detail').hidden = true;
  $('#sign-out').hidden = true;
  $('#sign-in').hidden = false;
  $('#who').textContent = '';
  $('#sign-in-error').textContent = message;
}

async function refresh() {
  await Promise.all([loadStats(), loadJobs()]);
}

async function loadStats() {
  const stats = await api('/admin/jobs/stats');
  fill(
    '#counts',
    stats.by_status_and_kind.map((entry) =>
      row([el('td', entry.status, `state-${entry.status}`), entry.kind, entry.count]),
    ),
  );
  fill(
    '#oldest',
    stats.queued.map((entry) => row([entry.kind, entry.count, age(entry.oldest_age_seconds)])),
  );
  fill(
    '#workers',
    stats.workers.map((worker) =>
      row([
        `${worker.hostname}:${worker.pid}`,
        `${worker.running} of ${worker.concurrency}`,
        when(worker.beat_at),
        worker.alive ? 'alive' : 'lost',
      ]),
    ),
  );
}

async function loadJobs() {
  // Newest first, so a fresh failure is on the first page; the next page follows the cursor to the oldest.
  const query = new URLSearchParams({ limit: String(pageSize), sort: '-created_at', include_total: 'true' });
  for (const [name, value] of new FormData($('#filters'))) if (value) query.set(name, String(value).trim());
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  $('#list-error').textContent = '';
  let page;
  try {
    page = await api(`/admin/jobs/?${query}`);
  } catch (error) {
    $('#list-error').textContent = error.message;
    return;
  }
  fill(
    '#jobs',
    page.items.map((job) => {
      const open = el('button', 'Open');
      open.type = 'button';
      open.dataset.job = job.id;
      open.addEventListener('click', () => openDetail(job.id));
      const action = el('td');
      action.append(open);
      const tenant = el('td', job.tenant_name ?? job.tenant_id);
      tenant.title = job.tenant_id;
      const site = el('td', job.site_slug ?? job.site_id);
      site.title = job.site_id;
      return row([
        when(job.created_at),
        job.kind,
        el('td', job.status, `state-${job.status}`),
        tenant,
        site,
        job.error ? `${job.error.code}: ${job.error.message}` : '',
        action,
      ]);
    }),
  );
  const first = (cursors.length - 1) * pageSize;
  const shown = page.items.length === 0 ? 'none' : `${first + 1}–${first + page.items.length}`;
  $('#total').textContent = `${shown} of ${page.total ?? '?'}`;
  $('#jobs').dataset.next = page.next_cursor ?? '';
  $('#newer').disabled = cursors.length === 1;
  $('#older').disabled = !page.next_cursor;
}

/** Moves one page on (older jobs) or back (newer). */
function turnPage(older) {
  if (older) {
    const next = $('#jobs').dataset.next;
    if (!next) return;
    cursors.push(next);
  } else if (cursors.length > 1) cursors.pop();
  loadJobs();
}

async function openDetail(id) {
  if (openJob !== id) {
    events?.abort();
    openJob = id;
  }
  const job = await api(`/admin/jobs/${id}`);
  $('#detail').hidden = false;
  $('#detail-id').textContent = job.id;
  $('#detail-error').textContent = '';
  const fields = [
    ['State', job.status],
    ['Kind', job.kind],
    ['Tenant', job.tenant_name ? `${job.tenant_name} (${job.tenant_id})` : job.tenant_id],
    ['Site', job.site_slug ? `${job.site_slug} (${job.site_id})` : job.site_id],
    ['Created', when(job.created_at)],
    ['Finished', when(job.finished_at)],
    ['Progress', job.progress === null || job.progress === undefined ? '' : `${Math.round(job.progress * 100)} %`],
    ['Stage', job.stage],
    ['Error', job.error ? `${job.error.code}: ${job.error.message}` : ''],
  ];
  $('#detail-fields').replaceChildren(
    ...fields.flatMap(([name, value]) => [el('dt', name), el('dd', value, name === 'State' ? `state-${value}` : '')]),
  );
  $('#detail').dataset.status = job.status;
  fill(
    '#attempts',
    job.attempts.map((attempt) =>
      row([
        attempt.attempt,
        attempt.worker_id,
        when(attempt.started_at),
        when(attempt.finished_at),
        attempt.outcome ?? 'running',
        attempt.error ? `${attempt.error.code}: ${attempt.error.message}` : '',
      ]),
    ),
  );
  // An agent run's steps: each model call and tool call, its tokens, time and cost.
  const steps = job.agent_steps ?? [];
  $('#steps-panel').hidden = steps.length === 0;
  fill(
    '#steps',
    steps.map((step) =>
      row([
        step.step,
        step.kind,
        step.name,
        step.status,
        step.input_tokens,
        step.output_tokens,
        `${step.duration_ms} ms`,
        step.cost.toFixed(4),
      ]),
    ),
  );
  const finished = ['succeeded', 'failed', 'canceled'].includes(job.status);
  $('#retry').disabled = job.status !== 'failed';
  $('#cancel').disabled = finished;
  if (!finished) watch(job);
}

/** Follows the open job's event stream until it ends, showing each change as it comes. */
async function watch(job) {
  if (events) return;
  const controller = new AbortController();
  events = controller;
  $('#live').textContent = 'live';
  try {
    const response = await fetch(`/${job.site_id}/jobs/${job.id}/events`, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const messages = buffer.split('\n\n');
      buffer = messages.pop();
      if (messages.some((message) => message.includes('data:')) && openJob === job.id) {
        await Promise.all([openDetailQuietly(job.id), refresh()]);
      }
    }
  } catch {
    // Aborted (another job opened, signed out) or the stream broke: the periodic refresh goes on.
  } finally {
    if (events === controller) events = null;
    $('#live').textContent = '';
    if (openJob === job.id && token) await openDetailQuietly(job.id);
  }
}

const openDetailQuietly = (id) => openDetail(id).catch(() => undefined);

async function act(action) {
  $('#detail-error').textContent = '';
  try {
    await api(`/admin/jobs/${openJob}/${action}`, { method: 'POST' });
  } catch (error) {
    $('#detail-error').textContent = error.message;
    return;
  }
  await Promise.all([openDetailQuietly(openJob), refresh()]);
}

$('#sign-in').addEventListener('submit', (event) =>
  signIn(event).catch((error) => ($('#sign-in-error').textContent = error.message)),
);
$('#sign-out').addEventListener('click', () => signOut());
$('#filters').addEventListener('submit', (event) => {
  event.preventDefault();
  cursors = [null];
  loadJobs();
});
$('#newer').addEventListener('click', () => turnPage(false));
$('#older').addEventListener('click', () => turnPage(true));
$('#retry').addEventListener('click', () => act('retry'));
$('#cancel').addEventListener('click', () => act('cancel'));
