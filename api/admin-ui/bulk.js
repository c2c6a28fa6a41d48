// Bulk retry of failed jobs and bulk cancel of queued ones, by the list's
// filters (its state filter aside: each action takes its own states). The API
// counts first (dry_run), the admin confirms that number in a dialog, and
// only then does anything change.
import { $ } from './dom.js';
import { send } from './session.js';

const actions = {
  retry: { path: '/admin/jobs/bulk-retry', noun: 'failed', verb: 'Retry', done: 'Retried' },
  cancel: { path: '/admin/jobs/bulk-cancel', noun: 'queued or waiting', verb: 'Cancel', done: 'Canceled' },
};

let pending = null;
let changed = () => undefined;

export function initBulk(onChange) {
  changed = onChange;
  $('#bulk-retry').addEventListener('click', () => ask('retry'));
  $('#bulk-cancel').addEventListener('click', () => ask('cancel'));
  $('#bulk-confirm').addEventListener('click', () => run());
  $('#bulk-keep').addEventListener('click', () => $('#bulk-dialog').close());
}

/** The list's filters as the bulk endpoints take them (they refuse fields they do not know). */
function filter() {
  const form = new FormData($('#filters'));
  const body = {};
  for (const name of ['kind', 'tenant', 'site', 'error_code']) {
    const value = String(form.get(name) ?? '').trim();
    if (value) body[name] = value;
  }
  const hours = form.get('max_age_hours');
  if (hours) body.max_age_hours = Number(hours);
  return body;
}

async function ask(name) {
  const action = actions[name];
  $('#bulk-result').textContent = '';
  pending = null;
  let count;
  try {
    count = await send(action.path, 'POST', { ...filter(), dry_run: true });
  } catch (error) {
    $('#bulk-result').textContent = error.message;
    return;
  }
  if (count.matched === 0) {
    $('#bulk-result').textContent = `No ${action.noun} jobs match the filters.`;
    return;
  }
  pending = { name, body: filter() };
  const some = count.matched === 1 ? `1 ${action.noun} job` : `${count.matched} ${action.noun} jobs`;
  $('#bulk-question').textContent = `${action.verb} ${some}?`;
  $('#bulk-detail').textContent =
    count.matched > count.limit ? `At most ${count.limit} go in one call; run it again for the rest.` : '';
  $('#bulk-confirm').textContent = action.verb;
  $('#bulk-dialog').showModal();
}

async function run() {
  $('#bulk-dialog').close();
  if (!pending) return;
  const action = actions[pending.name];
  const body = pending.body;
  pending = null;
  try {
    const result = await send(action.path, 'POST', body);
    const skipped = result.skipped ? `, ${result.skipped} skipped (their payers cannot cover them)` : '';
    const left = result.remaining ? `, ${result.remaining} left for another call` : '';
    $('#bulk-result').textContent = `${action.done} ${result.done}${skipped}${left}.`;
  } catch (error) {
    $('#bulk-result').textContent = error.message;
  }
  await changed();
}
