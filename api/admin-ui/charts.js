// Charts of the last hours, minute by minute and per kind of job, drawn as
// inline SVG from GET /admin/jobs/per-minute: jobs finished (solid) and
// failed (dashed), the queue's depth, and wait and run times (median solid,
// 95th percentile dashed). No chart library: the page loads nothing from
// elsewhere, and the CSP forbids inline styles, so colours and dashes are
// classes in style.css.
import { $, el, svg } from './dom.js';
import { api } from './session.js';

const width = 640;
const height = 170;
const margin = { left: 52, right: 8, top: 10, bottom: 22 };
const colours = 8;

export async function loadCharts() {
  const hours = $('#chart-hours').value;
  const data = await api(`/admin/jobs/per-minute?hours=${hours}`);
  const from = Date.parse(data.from);
  const minutes = Math.round((Date.parse(data.to) - from) / 60_000) + 1;
  const kinds = [...new Set(data.items.map((item) => item.kind))].sort();
  /** Each kind's values of one field, one per minute (null where the API left the minute out). */
  const series = (field, empty) => {
    const byKind = new Map(kinds.map((kind) => [kind, new Array(minutes).fill(empty)]));
    for (const item of data.items) {
      const index = Math.round((Date.parse(item.minute) - from) / 60_000);
      const value = item[field];
      if (index >= 0 && index < minutes) byKind.get(item.kind)[index] = value ?? empty;
    }
    return byKind;
  };
  const lines = (field, empty, dashed) =>
    kinds.map((kind, i) => ({ kind, colour: i % colours, dashed, values: series(field, empty).get(kind) }));
  const axis = { from, minutes };
  $('#charts').replaceChildren(
    chart(
      'Jobs finished per minute (dashed: failed)',
      axis,
      [...lines('succeeded', 0, false), ...lines('failed', 0, true)],
      '',
    ),
    chart('Queued, at the end of each minute', axis, lines('queued', 0, false), ''),
    chart(
      'Wait from submit to start (median; dashed: 95th percentile)',
      axis,
      [...lines('wait_ms_p50', null, false), ...lines('wait_ms_p95', null, true)],
      'ms',
    ),
    chart(
      'Run time (median; dashed: 95th percentile)',
      axis,
      [...lines('run_ms_p50', null, false), ...lines('run_ms_p95', null, true)],
      'ms',
    ),
  );
  $('#chart-legend').replaceChildren(...kinds.map((kind, i) => el('span', kind, `legend s${i % colours}`)));
  $('#charts-empty').hidden = kinds.length > 0;
  $('#charts').dataset.hours = hours;
}

/** Milliseconds as people read them; counts as they are. */
const format = (value, unit) =>
  unit !== 'ms'
    ? String(Number.isInteger(value) ? value : value.toFixed(1))
    : value >= 60_000
      ? `${(value / 60_000).toFixed(1)} min`
      : value >= 1000
        ? `${(value / 1000).toFixed(1)} s`
        : `${Math.round(value)} ms`;

function chart(title, { from, minutes }, lines, unit) {
  const max = Math.max(1, ...lines.flatMap((line) => line.values.filter((value) => value !== null)));
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const x = (index) => margin.left + (minutes <= 1 ? 0 : (index / (minutes - 1)) * plotWidth);
  const y = (value) => margin.top + plotHeight - (value / max) * plotHeight;
  const figure = el('figure', undefined, 'chart');
  const picture = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title });
  picture.append(svg('title', {}, title));
  for (const value of [0, max / 2, max]) {
    picture.append(
      svg('line', { x1: margin.left, x2: width - margin.right, y1: y(value), y2: y(value), class: 'grid' }),
      svg('text', { x: margin.left - 4, y: y(value) + 4, class: 'tick', 'text-anchor': 'end' }, format(value, unit)),
    );
  }
  const clock = (index) =>
    new Date(from + index * 60_000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  picture.append(
    svg('text', { x: margin.left, y: height - 6, class: 'tick' }, clock(0)),
    svg('text', { x: width - margin.right, y: height - 6, class: 'tick', 'text-anchor': 'end' }, clock(minutes - 1)),
  );
  // A kind with nothing to show in this chart (all zero or empty) draws no line along the axis.
  const drawn = lines.filter((line) => line.values.some((value) => value));
  for (const line of drawn) {
    // A gap (null: no job finished that minute) breaks the line rather than drawing it to zero.
    let path = '';
    let drawing = false;
    line.values.forEach((value, index) => {
      if (value === null) {
        drawing = false;
        return;
      }
      path += `${drawing ? 'L' : 'M'}${x(index).toFixed(1)} ${y(value).toFixed(1)} `;
      drawing = true;
    });
    if (!path) continue;
    // A lone point would be an invisible path: it gets a dot.
    const points = line.values.filter((value) => value !== null).length;
    const shape = svg('path', { d: path.trim(), class: `line s${line.colour}${line.dashed ? ' dashed' : ''}` });
    shape.append(svg('title', {}, line.kind));
    picture.append(shape);
    if (points === 1) {
      const index = line.values.findIndex((value) => value !== null);
      picture.append(svg('circle', { cx: x(index), cy: y(line.values[index]), r: 2.5, class: `dot s${line.colour}` }));
    }
  }
  figure.dataset.lines = String(drawn.length);
  figure.append(el('figcaption', title), picture);
  return figure;
}
