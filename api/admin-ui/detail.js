// One job in full: its fields, a progress bar with the stage, its input and
// output, attempts, webhook deliveries, agent steps and, for a media job, a
// preview of what it made. While the job runs, its event stream moves the
// progress bar as each change comes.
import { $, el, errorText, fill, row, when } from './dom.js';
import { api, authorization, send } from './session.js';

let openJob = null;
let shown = null;
let events = null;
let changed = () => undefined;
/** The media previewed now, by id list, and their object URLs to give back when they go. */
let previewOf = '';
let previewUrls = [];

/** `onChange` runs after an action or a change of state, so the list and counts follow. */
export function initDetail(onChange) {
  changed = onChange;
  $('#retry').addEventListener('click', () => act('retry'));
  $('#cancel').addEventListener('click', () => act('cancel'));
}

export const openJobId = () => openJob;

export function closeDetail() {
  openJob = null;
  shown = null;
  events?.abort();
  clearPreview();
  $('#detail').hidden = true;
}

export async function openDetail(id) {
  if (openJob !== id) {
    events?.abort();
    openJob = id;
  }
  const job = await api(`/admin/jobs/${id}`);
  if (openJob !== id) return;
  shown = job;
  $('#detail').hidden = false;
  $('#detail-id').textContent = job.id;
  $('#detail-error').textContent = '';
  const fields = [
    ['State', job.status],
    ['Kind', job.kind],
    ['Tenant', job.tenant_name ? `${job.tenant_name} (${job.tenant_id})` : job.tenant_id],
    ['Site', job.site_slug ? `${job.site_slug} (${job.site_id})` : job.site_id],
    ['Created', when(job.created_at)],
    ['Started', when(job.started_at)],
    ['Finished', when(job.finished_at)],
    ['Provider', job.provider ?? ''],
    ['Credits', `${job.credits_charged} charged, ${job.credits_reserved} reserved`],
    ['Error', errorText(job.error)],
  ];
  $('#detail-fields').replaceChildren(
    ...fields.flatMap(([name, value]) => [el('dt', name), el('dd', value, name === 'State' ? `state-${value}` : '')]),
  );
  $('#detail').dataset.status = job.status;
  showProgress(job);
  $('#detail-input').textContent = JSON.stringify(job.input, null, 2);
  $('#detail-output').textContent = job.output === null ? '(none yet)' : JSON.stringify(job.output, null, 2);
  fill(
    '#attempts',
    job.attempts.map((attempt) =>
      row([
        attempt.attempt,
        attempt.worker_id,
        when(attempt.started_at),
        when(attempt.finished_at),
        attempt.outcome ?? 'running',
        errorText(attempt.error),
      ]),
    ),
  );
  showSteps(job.agent_steps ?? []);
  const finished = ['succeeded', 'failed', 'canceled'].includes(job.status);
  $('#retry').disabled = job.status !== 'failed';
  $('#cancel').disabled = finished;
  $('#pause-tenant').dataset.tenantId = job.tenant_id;
  await Promise.all([showDeliveries(job), showPreview(job)]);
  if (!finished) watch(job);
}

/** The bar and the stage in words; the API's progress is 0 to 1, shown as a whole percent. */
function showProgress(job) {
  const percent = Math.round((job.progress ?? 0) * 100);
  const bar = $('#progress');
  bar.value = job.status === 'succeeded' ? 100 : percent;
  bar.dataset.percent = String(bar.value);
  bar.textContent = `${bar.value} %`;
  $('#progress-text').textContent = `${bar.value} %${job.stage ? ` — ${job.stage}` : ''}`;
}

function showSteps(steps) {
  // An agent run's steps: each model call and tool call, its tokens, time and cost.
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
}

async function showDeliveries(job) {
  $('#deliveries-panel').hidden = !job.webhook;
  if (!job.webhook) return;
  const page = await api(`/${job.site_id}/jobs/${job.id}/webhooks?limit=50`).catch(() => ({ items: [] }));
  fill(
    '#deliveries',
    page.items.map((delivery) => {
      const last = delivery.attempts.at(-1);
      return row([
        delivery.event,
        el('td', delivery.status, `delivery-${delivery.status}`),
        delivery.attempts.length,
        last ? (last.response_status ?? last.error ?? '') : '',
        when(delivery.finished_at ?? delivery.next_attempt_at),
      ]);
    }),
  );
}

function clearPreview() {
  for (const url of previewUrls) URL.revokeObjectURL(url);
  previewUrls = [];
  previewOf = '';
  $('#preview').replaceChildren();
  $('#preview-panel').hidden = true;
}

/**
 * The media a job made, played or shown in the page. The files need the
 * bearer token, which an <img src> cannot send, so each is fetched and shown
 * from a blob: URL (the CSP allows blob: for images and media, nothing else).
 */
async function showPreview(job) {
  const ids = mediaOf(job);
  const key = ids.join(',');
  if (key === previewOf) return;
  clearPreview();
  if (ids.length === 0) return;
  previewOf = key;
  $('#preview-panel').hidden = false;
  const items = await Promise.all(ids.slice(0, 4).map((id) => api(`/${job.site_id}/media/${id}`).catch(() => null)));
  for (const item of items) {
    if (!item || previewOf !== key) continue;
    const response = await fetch(`/${job.site_id}/media/${item.id}/view`, { headers: authorization() });
    if (!response.ok || previewOf !== key) continue;
    const url = URL.createObjectURL(await response.blob());
    previewUrls.push(url);
    $('#preview').append(player(item, url));
  }
}

/** The media a job made; else the item it worked on (an upload's processing, an item's metadata), named in its input. */
function mediaOf(job) {
  if (job.media_ids?.length) return job.media_ids;
  if (job.media_id) return [job.media_id];
  return typeof job.input?.media_id === 'string' ? [job.input.media_id] : [];
}

function player(item, url) {
  const figure = el('figure');
  let media;
  if (item.kind === 'image') {
    media = el('img');
    media.alt = item.alt || item.title || 'The job’s image';
  } else if (item.kind === 'audio' || item.kind === 'video') {
    media = el(item.kind);
    media.controls = true;
    media.preload = 'metadata';
  } else {
    media = el('a', 'Open the file');
    media.href = url;
    media.target = '_blank';
  }
  if (media.tagName !== 'A') media.src = url;
  media.dataset.media = item.id;
  figure.append(media, el('figcaption', `${item.kind}, ${item.mime_type}, ${Math.round(item.size_bytes / 1024)} KiB`));
  return figure;
}

/** Follows the open job's event stream until it ends: each event moves the bar; a new state reloads the job. */
async function watch(job) {
  if (events) return;
  const controller = new AbortController();
  events = controller;
  $('#live').textContent = 'live';
  let heard = false;
  try {
    // fetch() rather than EventSource, which cannot send the bearer header.
    const response = await fetch(`/${job.site_id}/jobs/${job.id}/events`, {
      headers: { ...authorization(), Accept: 'text/event-stream' },
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const messages = buffer.split('\n\n');
      buffer = messages.pop();
      for (const message of messages) {
        const data = message.split('\n').find((line) => line.startsWith('data:'));
        if (!data || openJob !== job.id) continue;
        const update = JSON.parse(data.slice(5));
        showProgress(update);
        heard = true;
        if (update.status !== shown?.status) {
          await Promise.all([openDetailQuietly(job.id), changed()]);
        }
      }
    }
  } catch {
    // Aborted (another job opened, signed out) or the stream broke: the periodic refresh goes on.
  } finally {
    if (events === controller) events = null;
    $('#live').textContent = '';
    // Read the end state once; a stream that said nothing is left to the periodic refresh, not retried at once.
    if (heard && openJob === job.id) await openDetailQuietly(job.id);
  }
}

export const openDetailQuietly = (id) => openDetail(id).catch(() => undefined);

async function act(action) {
  $('#detail-error').textContent = '';
  try {
    await send(`/admin/jobs/${openJob}/${action}`, 'POST');
  } catch (error) {
    $('#detail-error').textContent = error.message;
    return;
  }
  await Promise.all([openDetailQuietly(openJob), changed()]);
}
