// The queue panel: every kind of job with its priority, paused or running,
// with a button to pause or resume it; the tenants whose jobs are paused,
// with a button to resume each. A tenant is paused from an open job (it names
// its tenant). Queued jobs of a paused kind or tenant wait; running ones finish.
import { $, button, el, fill, row, when } from './dom.js';
import { api, send } from './session.js';

let changed = () => undefined;
/** Tenant names met in the job list, so a paused tenant shows by name. */
const tenantNames = new Map();

export function initQueue(onChange) {
  changed = onChange;
  $('#pause-tenant').addEventListener('click', () => {
    const { tenantId } = $('#pause-tenant').dataset;
    if (tenantId) act('PUT', `/admin/queue/pauses/tenants/${tenantId}`);
  });
}

export function rememberTenant(id, name) {
  if (name) tenantNames.set(id, name);
}

export async function loadQueue() {
  const [kinds, pauses] = await Promise.all([api('/admin/queue/kinds'), api('/admin/queue/pauses')]);
  const pausedKinds = new Map(pauses.kinds.map((pause) => [pause.kind, pause]));
  fill(
    '#queue-kinds',
    kinds.items.map((setting) => {
      const pause = pausedKinds.get(setting.kind);
      const path = `/admin/queue/pauses/kinds/${encodeURIComponent(setting.kind)}`;
      const toggle = pause
        ? button('Resume', () => act('DELETE', path))
        : button('Pause', () => act('PUT', path), 'secondary');
      toggle.dataset.kind = setting.kind;
      const cell = el('td');
      cell.append(toggle);
      const tr = row([
        setting.kind,
        setting.priority,
        el('td', pause ? `paused ${when(pause.paused_at)}` : 'running', pause ? 'paused' : ''),
        cell,
      ]);
      tr.dataset.kind = setting.kind;
      return tr;
    }),
  );
  $('#queue-tenants-panel').hidden = pauses.tenants.length === 0;
  fill(
    '#queue-tenants',
    pauses.tenants.map((pause) => {
      const resume = button('Resume', () => act('DELETE', `/admin/queue/pauses/tenants/${pause.tenant_id}`));
      resume.dataset.tenant = pause.tenant_id;
      const cell = el('td');
      cell.append(resume);
      return row([tenantNames.get(pause.tenant_id) ?? pause.tenant_id, pause.reason, when(pause.paused_at), cell]);
    }),
  );
}

async function act(method, path) {
  $('#queue-error').textContent = '';
  try {
    await send(path, method, method === 'PUT' ? { reason: 'Paused from the admin console' } : undefined);
  } catch (error) {
    $('#queue-error').textContent = error.message;
  }
  await Promise.all([loadQueue().catch(() => undefined), changed()]);
}
