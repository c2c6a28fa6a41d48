// The admin console's entry: sign-in (or picking up the session after a
// reload), the counts, the job list newest first with its pages and filters,
// and the periodic refresh that ties the panels together. Each panel is its
// own module; all of them read and act through the same JSON API as any
// client (session.js holds the token and how it is kept).
import { initBulk } from './bulk.js';
import { loadCharts } from './charts.js';
import { closeDetail, initDetail, openDetail, openDetailQuietly, openJobId } from './detail.js';
import { $, age, el, errorText, fill, row, when } from './dom.js';
import { initQueue, loadQueue, rememberTenant } from './queue.js';
import { api, isSignedIn, onSessionEnd, resume, signIn, signOut } from './session.js';

let refreshing = null;
let charting = null;
/**
 * The cursors of the pages read so far, newest first: the last is the page
 * shown (null: the first). Each refresh reads that page again, so a job that
 * arrives meanwhile lands on the first page rather than shifting this one.
 */
let cursors = [null];
const pageSize = 50;

async function submitSignIn(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  $('#sign-in-error').textContent = '';
  const problem = await signIn(String(form.get('username')), String(form.get('password')));
  if (problem) {
    $('#sign-in-error').textContent = problem;
    return;
  }
  event.target.reset();
  await enter();
}

/** Shows the console once the session is known to belong to a global admin. */
async function enter() {
  try {
    const me = await api('/auth/currentuser');
    await api('/admin/jobs/stats');
    $('#who').textContent = me.email ?? '';
  } catch (error) {
    await signOut();
    $('#sign-in-error').textContent = `This page is for global administrators (${error.message}).`;
    return;
  }
  $('#sign-in').hidden = true;
  $('#console').hidden = false;
  $('#sign-out').hidden = false;
  await refresh();
  refreshing = setInterval(() => refresh().catch(() => undefined), 5000);
  await loadCharts().catch(showChartError);
  charting = setInterval(() => loadCharts().catch(showChartError), 30_000);
}

const showChartError = (error) => ($('#charts-error').textContent = error.message);

function leave(message) {
  clearInterval(refreshing);
  clearInterval(charting);
  closeDetail();
  cursors = [null];
  $('#console').hidden = true;
  $('#sign-out').hidden = true;
  $('#sign-in').hidden = false;
  $('#who').textContent = '';
  $('#sign-in-error').textContent = message;
}

async function refresh() {
  if (!isSignedIn()) return;
  const open = openJobId();
  await Promise.all([loadStats(), loadJobs(), loadQueue(), open ? openDetailQuietly(open) : undefined]);
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
      rememberTenant(job.tenant_id, job.tenant_name);
      const open = el('button', 'Open');
      open.type = 'button';
      open.dataset.job = job.id;
      open.addEventListener('click', () =>
        openDetail(job.id)
          .then(() => $('#detail').scrollIntoView({ block: 'start' }))
          .catch((error) => ($('#list-error').textContent = error.message)),
      );
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
        progressCell(job),
        tenant,
        site,
        errorText(job.error),
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

/** A running job's progress as a small bar with its stage; a finished one needs none. */
function progressCell(job) {
  const cell = el('td');
  if (job.status === 'running' || job.status === 'waiting') {
    const bar = el('progress');
    bar.max = 100;
    bar.value = Math.round((job.progress ?? 0) * 100);
    bar.title = `${bar.value} %`;
    cell.append(bar, el('span', ` ${bar.value} %${job.stage ? ` ${job.stage}` : ''}`, 'stage'));
  } else if (job.stage && job.status === 'queued') cell.append(el('span', job.stage, 'stage'));
  return cell;
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

onSessionEnd(leave);
initDetail(refresh);
initBulk(refresh);
initQueue(refresh);
$('#sign-in').addEventListener('submit', (event) =>
  submitSignIn(event).catch((error) => ($('#sign-in-error').textContent = error.message)),
);
$('#sign-out').addEventListener('click', () => signOut());
$('#filters').addEventListener('submit', (event) => {
  event.preventDefault();
  cursors = [null];
  loadJobs();
});
$('#newer').addEventListener('click', () => turnPage(false));
$('#older').addEventListener('click', () => turnPage(true));
$('#chart-hours').addEventListener('change', () => loadCharts().catch(showChartError));

// After a reload, the session the previous page left in this tab (session.js) signs the admin straight in.
resume()
  .then((resumed) => (resumed ? enter() : undefined))
  .catch(() => undefined);
