// Hand-drawn SVG charts (no library, no network): vertical bars over time, optionally with a
// 0–100 % line, and horizontal bars for breakdowns. Each chart is an image with a text summary
// for screen readers, followed by its data as a table (the accessible, exact view).
const NS = 'http://www.w3.org/2000/svg';

function el(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A <details> table of the points: columns [{label, value: (p) => string, numeric}] */
export function dataTable(caption, columns, rows) {
  const t = document.createElement('table');
  const cap = document.createElement('caption');
  cap.textContent = caption;
  t.append(cap);
  const head = t.createTHead().insertRow();
  for (const c of columns) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = c.label;
    if (c.numeric) th.className = 'n';
    head.append(th);
  }
  const body = t.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const c of columns) {
      const td = tr.insertCell();
      td.textContent = c.value(r);
      if (c.numeric) td.className = 'n';
    }
  }
  return t;
}

function wrap(fig, svg, summary, table) {
  fig.replaceChildren();
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', summary);
  fig.append(svg);
  const d = document.createElement('details');
  const s = document.createElement('summary');
  s.textContent = 'Data table';
  d.append(s, table);
  fig.append(d);
}

function empty(fig) {
  fig.replaceChildren();
  const p = document.createElement('p');
  p.className = 'note';
  p.textContent = 'No requests in this period.';
  fig.append(p);
}

/**
 * Bars over a sequence of labels; `line` (optional) is a 0..1 series drawn on a right-hand % axis.
 * points: [{label, value, line?}], fmt: value → text, empty: nothing happened in the period.
 */
export function columnChart(fig, { title, points, fmt, lineLabel, table, empty: none }) {
  // The caller says whether there is anything to draw (from request counts): a period of requests
  // that cost nothing (own keys, refusals) is zero bars with its table, not "no requests".
  if (none) return empty(fig);
  const W = 720, H = 220, L = 70, R = lineLabel ? 44 : 12, T = 12, B = 30;
  const max = Math.max(1, ...points.map((p) => p.value));
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}` });
  svg.append(el('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
  svg.append(el('text', { x: L - 6, y: T + 8, 'text-anchor': 'end' }, fmt(max)));
  svg.append(el('text', { x: L - 6, y: H - B, 'text-anchor': 'end' }, fmt(0)));
  const slot = (W - L - R) / points.length;
  const bw = Math.max(2, Math.min(40, slot * 0.7));
  const every = Math.ceil(points.length / 10);
  const linePts = [];
  points.forEach((p, i) => {
    const h = ((H - T - B) * p.value) / max;
    const x = L + i * slot + (slot - bw) / 2;
    const bar = el('rect', { class: 'bar', x, y: H - B - h, width: bw, height: Math.max(0, h) });
    bar.append(el('title', {}, `${p.label}: ${fmt(p.value)}${p.line !== undefined ? `, ${lineLabel} ${(p.line * 100).toFixed(1)} %` : ''}`));
    svg.append(bar);
    if (i % every === 0) svg.append(el('text', { x: x + bw / 2, y: H - B + 16, 'text-anchor': 'middle' }, p.label));
    if (p.line !== undefined) linePts.push(`${x + bw / 2},${H - B - (H - T - B) * p.line}`);
  });
  if (lineLabel && linePts.length) {
    svg.append(el('polyline', { class: 'line', points: linePts.join(' ') }));
    svg.append(el('text', { x: W - R + 4, y: T + 8 }, '100 %'));
    svg.append(el('text', { x: W - R + 4, y: H - B }, '0 %'));
  }
  const total = points.reduce((s, p) => s + p.value, 0);
  wrap(fig, svg, `${title}: ${points.length} points from ${points[0].label} to ${points[points.length - 1].label}, total ${fmt(total)}, highest ${fmt(max)}.`, table);
}

/** The bars a breakdown draws at most (its table lists every point). */
export const MAX_BARS = 12;

/** Horizontal bars, biggest first: points [{label, value}]. */
export function barList(fig, { title, points, fmt, table }) {
  if (!points.length) return empty(fig);
  const sorted = [...points].sort((a, b) => b.value - a.value).slice(0, MAX_BARS);
  const W = 480, row = 24, L = 150, R = 110;
  const H = sorted.length * row + 8;
  const max = Math.max(1, ...sorted.map((p) => p.value));
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}` });
  sorted.forEach((p, i) => {
    const y = 4 + i * row;
    const w = ((W - L - R) * p.value) / max;
    svg.append(el('text', { x: L - 6, y: y + 15, 'text-anchor': 'end' }, p.label.length > 22 ? p.label.slice(0, 21) + '…' : p.label));
    const bar = el('rect', { class: 'bar', x: L, y: y + 3, width: Math.max(1, w), height: row - 8 });
    bar.append(el('title', {}, `${p.label}: ${fmt(p.value)}`));
    svg.append(bar);
    svg.append(el('text', { x: L + w + 6, y: y + 15 }, fmt(p.value)));
  });
  wrap(fig, svg, `${title}: ${sorted.map((p) => `${p.label} ${fmt(p.value)}`).join('; ')}.`, table);
}
