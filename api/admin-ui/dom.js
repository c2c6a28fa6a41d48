// Small helpers the console's modules share for building the page. Nothing
// from the API is ever parsed as HTML: text goes in as textContent, so a job's
// input cannot inject markup.

export const $ = (selector) => document.querySelector(selector);

/** An element holding text only. */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** A table row: strings become cells, nodes are used as they are. */
export function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : el('td', cell));
  return tr;
}

export function fill(tableSelector, rows) {
  $(`${tableSelector} tbody`).replaceChildren(...rows);
}

export function button(text, onClick, className) {
  const node = el('button', text, className);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** An SVG element with its attributes (SVG needs its namespace; attributes, not style, keep to the CSP). */
export function svg(tag, attributes = {}, text) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

export const age = (seconds) =>
  seconds < 90
    ? `${Math.round(seconds)} s`
    : seconds < 5400
      ? `${Math.round(seconds / 60)} min`
      : `${(seconds / 3600).toFixed(1)} h`;

export const errorText = (error) => (error ? `${error.code}: ${error.message}` : '');
