// Colour encodings of a column, shared by both renderers, and the legend.
//
// Every encoding is the same shape: one small integer per point (`codes`, a Uint16Array) indexing
// into `palette` (CSS hex colours). Continuous values are binned into RAMP_BINS steps of a
// viridis ramp; categories get a qualitative palette (the most frequent ones; the rest "other");
// null / missing values always use the last entry, NULL_GREY.

import { fill, fmt, h } from './dom.js';

export const NULL_GREY = '#c4c4c4';
export const PLAIN = '#3d6fb4';
export const RAMP_BINS = 64;
const MAX_CATEGORIES = 19; // + "other" = 20 qualitative colours

// viridis, cut before its palest yellow so that the top end stays visible on white
const VIRIDIS = [
  [68, 1, 84], [72, 36, 117], [65, 68, 135], [53, 95, 141], [42, 120, 142],
  [33, 145, 140], [34, 168, 132], [68, 191, 112], [122, 209, 81], [189, 223, 38],
];

// Tableau 20, reordered so that the first ten are the saturated ones
const CATEGORICAL = [
  '#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac',
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
];

const hex = ([r, g, b]) => `#${[r, g, b].map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;

/** The ramp's colour at t in [0, 1], as [r, g, b]. */
export function ramp(t) {
  const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const f = x - i;
  return VIRIDIS[i].map((v, c) => v + f * (VIRIDIS[i + 1][c] - v));
}

const RAMP_PALETTE = Array.from({ length: RAMP_BINS }, (_, i) => hex(ramp(i / (RAMP_BINS - 1))));

/** One colour for every point: {codes (all 0), palette: [colour, grey], legend: null}. */
export function plain(n, colour = PLAIN) {
  return { codes: new Uint16Array(n), palette: [colour, NULL_GREY], legend: null };
}

/**
 * Numbers (NaN or null for none) binned on the ramp. `domain` [lo, hi] fixes the ends (overlays in
 * 0..1); otherwise the finite min and max are used.
 */
export function encodeNumbers(values, { domain = null, label = '' } = {}) {
  const n = values.length;
  let lo = Infinity;
  let hi = -Infinity;
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || !Number.isFinite(v)) {
      missing++;
      continue;
    }
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (domain) [lo, hi] = domain;
  const nullCode = RAMP_BINS;
  const codes = new Uint16Array(n);
  const span = hi > lo ? hi - lo : 1;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || !Number.isFinite(v)) codes[i] = nullCode;
    else codes[i] = Math.min(RAMP_BINS - 1, Math.max(0, Math.floor(((v - lo) / span) * RAMP_BINS)));
  }
  const seen = n - missing;
  return {
    codes,
    palette: [...RAMP_PALETTE, NULL_GREY],
    legend: { kind: 'continuous', label, min: seen ? lo : null, max: seen ? hi : null, missing },
  };
}

/** Category codes (-1 for missing) with their names; the most frequent get their own colour. */
export function encodeCategories(codesIn, categories, { label = '' } = {}) {
  const n = codesIn.length;
  const counts = new Float64Array(categories.length);
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const c = codesIn[i];
    if (c === null || c < 0 || c >= categories.length) missing++;
    else counts[c]++;
  }
  const order = Array.from(categories.keys()).filter((c) => counts[c] > 0).sort((a, b) => counts[b] - counts[a]);
  const own = order.length > MAX_CATEGORIES + 1 ? order.slice(0, MAX_CATEGORIES) : order;
  const other = order.length - own.length;
  const colourOf = new Int32Array(categories.length).fill(own.length); // "other"
  own.forEach((c, j) => {
    colourOf[c] = j;
  });
  const palette = own.map((_, j) => CATEGORICAL[j % CATEGORICAL.length]);
  const otherColour = '#8d8d8d';
  palette.push(otherColour, NULL_GREY);
  const nullCode = palette.length - 1;
  const codes = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const c = codesIn[i];
    codes[i] = c === null || c < 0 || c >= categories.length ? nullCode : colourOf[c];
  }
  const items = own.map((c, j) => ({ label: String(categories[c]), colour: palette[j], count: counts[c] }));
  if (other) {
    let otherCount = 0;
    for (const c of order.slice(own.length)) otherCount += counts[c];
    items.push({ label: `${other} others`, colour: otherColour, count: otherCount });
  }
  return { codes, palette, legend: { kind: 'category', label, items, missing } };
}

/** Booleans (null for none) as two categories. */
export function encodeBools(values, { label = '' } = {}) {
  const codes = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    codes[i] = v === null || v === undefined ? -1 : v ? 1 : 0;
  }
  return encodeCategories(codes, ['false', 'true'], { label });
}

/** Draw a legend into `el` (hidden when legend is null). */
export function renderLegend(el, legend) {
  if (!legend) {
    el.hidden = true;
    fill(el);
    return;
  }
  el.hidden = false;
  const title = legend.label ? h('div', { class: 'legend-title' }, legend.label) : null;
  const nulls = legend.missing
    ? h('div', { class: 'legend-row' }, h('span', { class: 'swatch', style: { background: NULL_GREY } }),
      `no value (${legend.missing})`)
    : null;
  if (legend.kind === 'continuous') {
    const stops = RAMP_PALETTE.filter((_, i) => i % 7 === 0 || i === RAMP_BINS - 1).join(', ');
    fill(el, title,
      h('div', { class: 'ramp', style: { background: `linear-gradient(to right, ${stops})` } }),
      h('div', { class: 'ramp-labels' }, h('span', { class: 'legend-min' }, fmt(legend.min)),
        h('span', { class: 'legend-max' }, fmt(legend.max))),
      nulls);
  } else {
    fill(el, title,
      legend.items.map((it) => h('div', { class: 'legend-row', title: `${it.label}: ${it.count}` },
        h('span', { class: 'swatch', style: { background: it.colour } }), it.label)),
      nulls);
  }
}
