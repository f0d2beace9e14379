// The repspace explorer: one page over `repspace serve`.
//
// The page keeps one row order, the rows of space A's layout (the order of its ids): colours,
// highlights and space B's positions are all typed arrays in A's rows, so both maps and the
// morph draw the same points. The first frame is drawn from raw float32 coordinates; the ids,
// fields and colours come after it.
//
// window.__repspace is the page's state for tests and scripts (see the README).

import './explorer.css';

import * as api from './api.js';
import { encodeBools, encodeCategories, encodeNumbers, plain } from './colour.js';
import { $, clip, fill, fmt, h } from './dom.js';
import { alignRows, gather, lerp, normalise, procrustes } from './geometry.js';
import { MapView, chooseRenderer } from './map-view.js';

const JACCARD = 'compare:jaccard';
const SIZE_FIELD = 'k_occurrence';
const COMPARE_K = 10;
const MOVED = 50;
const params = new URLSearchParams(window.location.search);

// ------------------------------------------------------------------ state
const S = {
  spaces: [],
  method: 'pca',
  a: null, // {name, method, n, x, y, ids, index, generation, fields, overlays}
  bName: null,
  b: null, // {name, ids, rows, x, y, shared}
  view: 'side', // two-space view: side | morph
  morphT: 0,
  colour: '',
  size: false,
  style: null, // {codes, palette, sizes, legend} in A's rows
  hitIds: [], // highlighted ids (search hits or a lasso)
  hitIdsB: [], // space B's hits in a two-space search
  selectedId: null,
  moved: [],
  token: 0,
  styleSeq: 0,
  abort: null,
  columns: new Map(),
};

const hook = {
  ready: false,
  renderer: null,
  space: null,
  spaceB: null,
  layout: 'pca',
  points: 0,
  colourBy: null,
  sizeBy: false,
  legend: null,
  highlighted: [],
  selected: null,
  twoSpace: false,
  view: 'side',
  movedRows: 0,
  errors: [],
  busy: 0,
  /** Viewport position [x, y] (CSS pixels) of an id on map "a" or "b", or null. */
  screenPosition(id, which = 'a') {
    const row = S.a?.index?.get(String(id));
    const view = which === 'b' ? mapB : mapA;
    if (row === undefined || !view || (which === 'b' && !S.b)) return null;
    return view.screenPosition(row);
  },
  /** The ids of A's map in row order (null until loaded). */
  ids() {
    return S.a?.ids || null;
  },
  /** Resolves once every draw asked for so far is on screen. */
  settled() {
    return Promise.all([mapA?.settled(), mapB?.settled()]).then(() => true);
  },
};
window.__repspace = hook;

let mapA = null;
let mapB = null;

// ------------------------------------------------------------------ status line
const statusEl = () => $('#status');

function status(text, kind = 'info') {
  const el = statusEl();
  el.textContent = text;
  el.title = text;
  el.className = `status ${kind}`;
}

function report(error, what) {
  if (error && error.name === 'AbortError') return;
  const message = `${what}: ${error && error.message ? error.message : error}`.split('\n')[0];
  hook.errors.push(message);
  status(message, 'error');
}

/** Run an async step with the busy count kept; errors go to the status line, never thrown. */
async function task(what, fn) {
  hook.busy++;
  try {
    return await fn();
  } catch (e) {
    report(e, what);
    return undefined;
  } finally {
    hook.busy--;
  }
}

function summary() {
  if (!S.a) return '';
  const info = S.spaces.find((s) => s.name === S.a.name);
  const dims = info ? ` · ${info.dim}-d ${info.metric}` : '';
  let text = `${S.a.name}: ${S.a.n.toLocaleString()} points${dims} · ${S.a.method.toUpperCase()} · ${hook.renderer}`;
  if (S.b) text += ` · B = ${S.b.name} (${S.b.shared.toLocaleString()} shared)`;
  return text;
}

function saveUrl() {
  const p = new URLSearchParams();
  if (S.a) p.set('space', S.a.name);
  if (S.method !== 'pca') p.set('layout', S.method);
  if (S.colour) p.set('colour', S.colour);
  if (S.size) p.set('size', '1');
  if (S.bName) p.set('b', S.bName);
  if (S.bName && S.view !== 'side') p.set('view', S.view);
  if (params.get('renderer')) p.set('renderer', params.get('renderer'));
  const url = `${window.location.pathname}${p.toString() ? `?${p}` : ''}`;
  window.history.replaceState(null, '', url);
}

// ------------------------------------------------------------------ tabs
function showTab(name) {
  for (const b of document.querySelectorAll('.tabs [data-tab]')) {
    b.setAttribute('aria-selected', String(b.dataset.tab === name));
  }
  for (const t of document.querySelectorAll('#side .tab')) t.hidden = t.id !== `tab-${name}`;
}

// ------------------------------------------------------------------ rows and ids
const rowOf = (id) => S.a?.index?.get(String(id));

function rowsOf(ids) {
  const rows = [];
  for (const id of ids) {
    const r = rowOf(id);
    if (r !== undefined) rows.push(r);
  }
  return rows;
}

function applyHighlight() {
  const rows = rowsOf(S.hitIds);
  mapA.setHighlight(rows);
  if (mapB && S.b) mapB.setHighlight(S.hitIdsB.length ? rowsOf(S.hitIdsB) : rows);
  const sel = S.selectedId === null ? -1 : rowOf(S.selectedId) ?? -1;
  mapA.setSelected(sel);
  if (mapB && S.b) mapB.setSelected(sel);
  hook.highlighted = S.hitIds.filter((id) => rowOf(id) !== undefined);
  hook.selected = S.selectedId;
}

function setHits(ids, idsB = []) {
  S.hitIds = ids.map(String);
  S.hitIdsB = idsB.map(String);
  applyHighlight();
}

function clearSelection() {
  S.hitIds = [];
  S.hitIdsB = [];
  S.selectedId = null;
  applyHighlight();
}

// ------------------------------------------------------------------ map events
function onPick(row) {
  const id = S.a?.ids?.[row];
  if (id === undefined) {
    applyHighlight();
    return;
  }
  openId(String(id));
}

function onLasso(rows) {
  if (!S.a?.ids) return;
  const ids = rows.map((r) => S.a.ids[r]).filter((id) => id !== undefined);
  if (!ids.length) {
    clearSelection();
    return;
  }
  setHits(ids);
  renderLasso(ids);
  showTab('results');
}

function onClear() {
  clearSelection();
}

/** Select an id: highlight it and open its panel (the two-space comparison when B is shown). */
function openId(id) {
  S.selectedId = id;
  applyHighlight();
  return S.b ? openCompareItem(id) : openItem(id);
}

// ------------------------------------------------------------------ loading a space
async function loadSpace(name, { keepSelection = false, attempt = 0 } = {}) {
  const token = ++S.token;
  S.abort?.abort();
  const ac = new AbortController();
  S.abort = ac;
  const signal = ac.signal;
  hook.ready = false;
  const method = S.method;
  status(`loading the ${method.toUpperCase()} map of ${name}…`, 'busy');
  const ok = await task(`map of ${name}`, async () => {
    const m = await api.map(name, method, { signal });
    if (token !== S.token) return false;
    const { x, y } = normalise(m.xy, m.count);
    const same = S.a && S.a.name === name;
    S.a = {
      name, method, n: m.count, x, y, ids: m.ids, index: null, generation: m.generation,
      fields: same ? S.a.fields : undefined, overlays: same ? S.a.overlays : [],
    };
    S.b = null;
    if (!keepSelection) {
      S.hitIds = [];
      S.hitIdsB = [];
      S.selectedId = null;
    }
    hook.space = name;
    hook.layout = method;
    hook.points = m.count;
    hook.highlighted = [];
    hook.selected = null;
    mapA.setTitle(`${name} · ${method.toUpperCase()}`);
    S.style = plain(m.count);
    await mapA.setData(x, y, S.style); // the first frame: no ids yet
    if (token !== S.token) return false;
    if (!S.a.ids) {
      const r = await api.mapIds(name, method, { signal });
      if (token !== S.token) return false;
      if (m.generation !== null && r.generation !== null && r.generation !== m.generation) {
        return 'changed'; // the space changed between the two requests: read it again
      }
      S.a.ids = r.ids;
    }
    if (S.a.ids.length !== m.count) throw new Error(`${S.a.ids.length} ids for ${m.count} points`);
    const index = new Map();
    for (let i = 0; i < S.a.ids.length; i++) index.set(String(S.a.ids[i]), i);
    S.a.index = index;
    return true;
  });
  if (ok === 'changed' && attempt < 2) return loadSpace(name, { keepSelection, attempt: attempt + 1 });
  if (ok !== true || token !== S.token) {
    if (token === S.token) hook.ready = true;
    return;
  }
  if (S.a.fields === undefined) {
    await task(`fields of ${name}`, async () => {
      const f = await api.fields(name, { signal });
      if (token !== S.token) return;
      S.a.fields = f ? f.fields : null;
      S.a.overlays = f ? f.overlays || [] : [];
    });
  }
  if (token !== S.token) return;
  if (S.bName === name) S.bName = null;
  fillPickers();
  if (!S.bName) layoutTwoSpace();
  applyHighlight();
  if (S.bName) await enterTwoSpace(token);
  if (token !== S.token) return;
  await applyStyle(token);
  if (token !== S.token) return;
  saveUrl();
  hook.ready = true;
  if (!hook.errors.length || statusEl().classList.contains('busy')) status(summary());
}

// ------------------------------------------------------------------ pickers
function fillPickers() {
  const spaceSel = $('#space');
  fill(spaceSel, S.spaces.map((s) => h('option', { value: s.name }, `${s.name} (${s.count.toLocaleString()})`)));
  spaceSel.value = S.a ? S.a.name : '';
  $('#layout').value = S.method;

  const bSel = $('#space-b');
  fill(bSel, h('option', { value: '' }, '(none)'),
    S.spaces.filter((s) => !S.a || s.name !== S.a.name)
      .map((s) => h('option', { value: s.name }, `${s.name} (${s.count.toLocaleString()})`)));
  bSel.value = S.bName || '';

  const colourSel = $('#colour');
  const fields = S.a?.fields;
  const groups = [h('option', { value: '' }, 'none')];
  if (fields === null) {
    groups.push(h('option', { value: '', disabled: true }, '(this server lists no fields)'));
  } else if (fields && fields.length) {
    groups.push(h('optgroup', { label: 'metadata' },
      fields.map((f) => h('option', { value: f.name }, `${f.name} (${f.kind})`))));
  }
  if (S.a?.overlays?.length) {
    groups.push(h('optgroup', { label: 'diagnostics' },
      S.a.overlays.map((o) => h('option', { value: o.name, title: o.label || o.name }, o.name))));
  }
  if (S.bName) {
    groups.push(h('optgroup', { label: 'comparison' },
      h('option', { value: JACCARD }, `neighbourhood Jaccard with ${S.bName}`)));
  }
  fill(colourSel, groups);
  const known = new Set([...colourSel.options].filter((o) => !o.disabled).map((o) => o.value));
  if (!known.has(S.colour)) S.colour = '';
  colourSel.value = S.colour;

  const sizeOk = !!fields && fields.some((f) => f.name === SIZE_FIELD && f.kind === 'number');
  const sizeBox = $('#size-by');
  sizeBox.disabled = !sizeOk;
  $('#size-ctl').title = sizeOk ? 'point size by k-occurrence (hubs are large)'
    : 'no k_occurrence: run `repspace diagnose SPACE --save` to store it';
  if (!sizeOk) S.size = false;
  sizeBox.checked = S.size;

  const two = !!S.bName;
  $('#view-b-ctl').hidden = !two;
  $('#view-b').value = S.view;
  document.querySelector('.tabs [data-tab="moved"]').hidden = !two;
  if (!two && !$('#tab-moved').hidden) showTab('results');
}

// ------------------------------------------------------------------ colours
async function columnOf(name) {
  const key = `${S.a.name}|${name}|${name.startsWith('@') ? S.a.method : ''}|${S.a.generation}`;
  if (S.columns.has(key)) return S.columns.get(key);
  const col = await api.column(S.a.name, name, S.a.method, { signal: S.abort?.signal });
  const n = col.kind === 'category' ? col.codes.length : col.values.length;
  if (n !== S.a.n) throw new Error(`column ${name} has ${n} values for ${S.a.n} points`);
  S.columns.set(key, col);
  if (S.columns.size > 12) S.columns.delete(S.columns.keys().next().value);
  return col;
}

async function encode(name) {
  if (!name) return plain(S.a.n);
  if (name === JACCARD) {
    const j = await api.compareJaccard(S.a.name, S.bName, COMPARE_K, S.a.method, { signal: S.abort?.signal });
    if (!j) throw new Error('this server has no /compare/{a}/{b}/jaccard route');
    if (j.values.length !== S.a.n) throw new Error(`${j.values.length} Jaccard values for ${S.a.n} points`);
    return encodeNumbers(j.values, {
      domain: [0, 1], label: `neighbourhood Jaccard@${j.k ?? COMPARE_K} with ${S.bName} (mean ${fmt(j.mean)})`,
    });
  }
  const col = await columnOf(name);
  const label = (S.a.overlays || []).find((o) => o.name === name)?.label || name;
  if (col.kind === 'category') return encodeCategories(Int32Array.from(col.codes, (c) => c ?? -1), col.categories, { label });
  if (col.kind === 'bool') return encodeBools(col.values, { label });
  return encodeNumbers(col.values, { domain: name.startsWith('@') ? [0, 1] : null, label });
}

async function sizes() {
  if (!S.size) return null;
  const col = await columnOf(SIZE_FIELD);
  const v = col.values;
  let max = 0;
  for (const x of v) if (x !== null && x > max) max = x;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] === null || !max ? 0 : Math.sqrt(Math.max(0, v[i]) / max);
  return out;
}

async function applyStyle(token = S.token) {
  if (!S.a) return;
  const name = S.colour;
  const seq = ++S.styleSeq; // a later colour choice wins, whichever answer comes first
  const stale = (e) => token !== S.token || seq !== S.styleSeq || (e && e.name === 'AbortError');
  await task(name ? `colour by ${name}` : 'colours', async () => {
    let style;
    try {
      style = await encode(name);
    } catch (e) {
      if (stale(e)) return;
      S.colour = '';
      $('#colour').value = '';
      style = plain(S.a.n);
      report(e, `colour by ${name}`);
    }
    let sz = null;
    try {
      sz = await sizes();
    } catch (e) {
      if (stale(e)) return;
      S.size = false;
      $('#size-by').checked = false;
      report(e, 'size by k_occurrence');
    }
    if (stale()) return;
    S.style = { ...style, sizes: sz };
    await mapA.setStyle(S.style);
    if (mapB && S.b && S.view === 'side') await mapB.setStyle(S.style);
    hook.colourBy = S.colour || null;
    hook.sizeBy = !!sz;
    hook.legend = style.legend
      ? { kind: style.legend.kind, label: style.legend.label, min: style.legend.min ?? null, max: style.legend.max ?? null,
        items: style.legend.items ? style.legend.items.length : 0, missing: style.legend.missing }
      : null;
    applyHighlight();
  });
  saveUrl();
}

// ------------------------------------------------------------------ two spaces
function ensureMapB() {
  if (!mapB) {
    mapB = new MapView($('#map-b'), { kind: mapA.kind, onPick, onLasso, onClear });
  }
  return mapB;
}

function layoutTwoSpace() {
  const two = !!S.bName;
  const side = two && S.view === 'side';
  $('#map-b').hidden = !side;
  $('#morph').hidden = !(two && S.view === 'morph');
  hook.twoSpace = two;
  hook.spaceB = S.bName;
  hook.view = S.view;
  document.body.classList.toggle('two-space', two);
  mapA.resize();
  if (mapB) mapB.resize();
}

async function enterTwoSpace(token = S.token) {
  const bName = S.bName;
  layoutTwoSpace();
  status(`loading ${bName} to compare…`, 'busy');
  await task(`map of ${bName}`, async () => {
    const m = await api.map(bName, S.a.method, { signal: S.abort?.signal });
    const ids = m.ids || (await api.mapIds(bName, S.a.method, { signal: S.abort?.signal })).ids;
    if (token !== S.token || bName !== S.bName) return;
    const nb = normalise(m.xy, m.count);
    const index = new Map();
    for (let i = 0; i < ids.length; i++) index.set(String(ids[i]), i);
    const rows = alignRows(S.a.ids.map(String), index);
    let shared = 0;
    for (const r of rows) if (r >= 0) shared++;
    const { x, y } = procrustes(S.a.x, S.a.y, gather(nb.x, rows), gather(nb.y, rows));
    S.b = { name: bName, ids, rows, x, y, shared };
    hook.spaceB = bName;
    await showTwoSpaceView();
  });
  if (token !== S.token || bName !== S.bName) return;
  await loadMoved(token);
}

async function showTwoSpaceView() {
  layoutTwoSpace();
  if (!S.b) return;
  if (S.view === 'side') {
    await mapA.setPositions(S.a.x, S.a.y);
    const view = ensureMapB();
    view.setTitle(`${S.b.name} · ${S.a.method.toUpperCase()} (turned to match ${S.a.name})`);
    view.resize();
    await view.setData(S.b.x, S.b.y, S.style || plain(S.a.n));
  } else {
    $('#morph-a').textContent = S.a.name;
    $('#morph-b').textContent = S.b.name;
    $('#morph-t').value = String(Math.round(S.morphT * 1000));
    await morphTo(S.morphT, false);
  }
  applyHighlight();
}

const morphBuf = { x: null, y: null };
async function morphTo(t, quick) {
  if (!S.b) return;
  S.morphT = t;
  if (!morphBuf.x || morphBuf.x.length !== S.a.n) {
    morphBuf.x = new Float32Array(S.a.n);
    morphBuf.y = new Float32Array(S.a.n);
  }
  // new arrays each time: the renderer keeps a reference to the ones it draws
  const x = lerp(S.a.x, S.b.x, t, quick ? morphBuf.x : new Float32Array(S.a.n));
  const y = lerp(S.a.y, S.b.y, t, quick ? morphBuf.y : new Float32Array(S.a.n));
  mapA.setTitle(t <= 0 ? `${S.a.name} · ${S.a.method.toUpperCase()}`
    : t >= 1 ? `${S.b.name} · ${S.a.method.toUpperCase()}` : `${S.a.name} → ${S.b.name} (${Math.round(t * 100)}%)`);
  await mapA.setPositions(x, y, { quick });
}

async function setSpaceB(name) {
  S.bName = name || null;
  S.moved = [];
  hook.movedRows = 0;
  S.hitIdsB = [];
  const token = S.token;
  if (!S.bName) {
    S.b = null;
    hook.twoSpace = false;
    hook.spaceB = null;
    if (S.colour === JACCARD) S.colour = '';
    fillPickers();
    layoutTwoSpace();
    await mapA.setPositions(S.a.x, S.a.y);
    mapA.setTitle(`${S.a.name} · ${S.a.method.toUpperCase()}`);
    await applyStyle(token);
    saveUrl();
    status(summary());
    return;
  }
  if (!S.colour) S.colour = JACCARD; // the natural colour of a comparison
  fillPickers();
  hook.ready = false;
  await enterTwoSpace(token);
  if (token !== S.token) return;
  await applyStyle(token);
  saveUrl();
  hook.ready = true;
  if (!statusEl().classList.contains('error')) status(summary());
}

const MEASURES = [
  ['cka_linear', 'CKA (linear)'], ['cka_debiased', 'CKA (debiased)'], ['neighbourhood_jaccard', 'neighbourhood Jaccard'],
  ['mutual_knn', 'mutual kNN'], ['rsa', 'RSA'], ['procrustes', 'Procrustes distance'], ['svcca', 'SVCCA'],
];

function measureValue(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'object') return v.value ?? v.mean ?? null;
  return null;
}

async function loadMoved(token = S.token) {
  const a = S.a.name;
  const b = S.bName;
  await task(`compare ${a} with ${b}`, async () => {
    const r = await api.compare(a, b, MOVED, COMPARE_K, { signal: S.abort?.signal });
    if (token !== S.token || b !== S.bName) return;
    S.moved = (r.changed || []).slice().sort((p, q) => (p.jaccard ?? 1) - (q.jaccard ?? 1));
    hook.movedRows = S.moved.length;
    const rows = MEASURES.filter(([key]) => key in r)
      .map(([key, label]) => h('tr', {}, h('th', {}, label), h('td', { class: 'num' }, fmt(measureValue(r[key])))));
    const table = h('table', { class: 'moved' },
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', {}, 'id'),
        h('th', { class: 'num', title: `Jaccard of the ${r.k}-NN sets in ${a} and ${b}` }, 'Jaccard'),
        h('th', { class: 'num' }, 'lost'), h('th', { class: 'num' }, 'gained'))),
      h('tbody', {}, S.moved.map((m, i) => h('tr', {
        class: 'row', dataset: { id: m.id }, tabindex: '0', title: 'show kept, lost and gained neighbours',
        onclick: () => openId(String(m.id)),
        onkeydown: (e) => { if (e.key === 'Enter') openId(String(m.id)); },
      }, h('td', { class: 'num' }, i + 1), h('td', { class: 'id' }, m.id), h('td', { class: 'num' }, fmt(m.jaccard)),
      h('td', { class: 'num' }, (m.lost || []).length), h('td', { class: 'num' }, (m.gained || []).length)))));
    fill($('#tab-moved'),
      h('h2', {}, `${a} → ${b}`),
      h('p', { class: 'meta' }, `${fmt(r.n_shared)} shared items (${fmt(r.n_a)} in ${a}, ${fmt(r.n_b)} in ${b}); k = ${r.k}`),
      rows.length ? h('table', { class: 'measures' }, h('tbody', {}, rows)) : null,
      h('h3', {}, `The ${S.moved.length} items whose neighbourhoods moved most`),
      S.moved.length ? table : h('p', { class: 'empty' }, 'No items moved.'));
  });
}

// ------------------------------------------------------------------ side panels
function hitList(hits, { compact = false } = {}) {
  if (!hits) return h('p', { class: 'empty' }, 'not available');
  if (!hits.length) return h('p', { class: 'empty' }, 'no hits');
  return h('ol', { class: compact ? 'hits compact' : 'hits' }, hits.map((hit) => h('li', {
    class: 'hit', dataset: { id: hit.id }, tabindex: '0', title: hit.text ? clip(hit.text, 400) : hit.id,
    onclick: () => openId(String(hit.id)),
    onkeydown: (e) => { if (e.key === 'Enter') openId(String(hit.id)); },
  }, h('span', { class: 'id' }, hit.id), h('span', { class: 'score' }, fmt(hit.score)),
  !compact && hit.text && hit.text !== hit.id ? h('div', { class: 'text' }, clip(hit.text)) : null)));
}

function renderLasso(ids) {
  const shown = ids.slice(0, 500);
  fill($('#tab-results'),
    h('h2', {}, `Lasso: ${ids.length.toLocaleString()} points`),
    ids.length > shown.length ? h('p', { class: 'meta' }, `the first ${shown.length} are listed`) : null,
    hitList(shown.map((id) => ({ id, score: null, text: null })), { compact: true }));
}

async function runSearch() {
  if (!S.a) return;
  const mode = $('#mode').value;
  const typed = $('#query').value;
  const q = mode === 'id' && typed.trim() ? typed : typed.trim(); // an id is data: its spaces are part of it
  const where = $('#where').value.trim();
  const k = Math.max(1, Math.min(1000, Number.parseInt($('#k').value, 10) || 10));
  if (!q) {
    status('type a query (a text, or an id with the mode set to id)');
    return;
  }
  const body = { [mode]: q, k };
  if (where) body.where = where;
  const a = S.a.name;
  status(`searching ${a}…`, 'busy');
  const done = await task(`search ${a}`, async () => {
    if (S.b) {
      const b = S.b.name;
      let r = where ? null : await api.compareSearch(a, b, { [mode]: q, k: Math.min(k, 100) });
      if (!r) {
        const [ra, rb] = await Promise.allSettled([api.search(a, body), api.search(b, body)]);
        if (ra.status === 'rejected') throw ra.reason;
        r = { a: ra.value.hits, b: rb.status === 'fulfilled' ? rb.value.hits : null, mapped: null, map: null,
          errorB: rb.status === 'rejected' ? rb.reason.message : null };
      }
      setHits(r.a.map((x) => x.id), (r.b || []).map((x) => x.id));
      const col = (title, hits, note) => h('div', { class: 'col' }, h('h3', {}, title),
        note ? h('p', { class: 'meta' }, note) : null, hitList(hits, { compact: true }));
      fill($('#tab-results'),
        h('h2', {}, `Top ${k} for ${mode} “${clip(q, 60)}”`),
        h('div', { class: 'cols' },
          col(`in ${a}`, r.a),
          col(`in ${b}`, r.b, r.errorB),
          r.mapped ? col(`mapped into ${b}`, r.mapped, r.map ? `by ${r.map}` : null) : null));
    } else {
      const r = await api.search(a, body);
      setHits(r.hits.map((x) => x.id));
      const plan = r.plan || {};
      fill($('#tab-results'),
        h('h2', {}, `${r.hits.length} hits for ${mode} “${clip(q, 60)}”`),
        h('p', { class: 'meta' }, [where ? `where ${where} · ` : '', plan.method ? `${plan.method}` : '',
          plan.candidates !== undefined && plan.candidates !== null ? ` · ${plan.candidates} candidates` : ''].join('')),
        hitList(r.hits));
    }
    showTab('results');
    return true;
  });
  if (done) status(summary());
}

function metadataTable(meta) {
  const keys = Object.keys(meta || {}).sort();
  if (!keys.length) return h('p', { class: 'empty' }, 'no metadata');
  return h('table', { class: 'meta-table' }, h('tbody', {}, keys.map((key) => {
    const v = meta[key];
    return h('tr', {}, h('th', {}, key), h('td', {}, typeof v === 'object' && v !== null ? JSON.stringify(v) : fmt(v)));
  })));
}

const idLink = (id, extra = null, cls = '') => h('a', {
  href: '#', class: `id-link ${cls}`.trim(), dataset: { id },
  onclick: (e) => { e.preventDefault(); openId(String(id)); },
}, id, extra);

async function openItem(id) {
  const a = S.a.name;
  status(`opening ${id}…`, 'busy');
  const ok = await task(`item ${id}`, async () => {
    const it = await api.item(a, id);
    if (S.selectedId !== id) return true;
    const exact = it.exact || it.neighbours || [];
    const approx = it.approximate; // undefined: not served; null: no index
    const exactIds = new Set(exact.map((n) => n.id));
    const rows = [];
    const len = Math.max(exact.length, approx ? approx.length : 0);
    for (let i = 0; i < len; i++) {
      const e = exact[i];
      const p = approx ? approx[i] : null;
      rows.push(h('tr', {}, h('td', { class: 'num' }, i + 1),
        h('td', {}, e ? idLink(e.id) : ''), h('td', { class: 'num' }, e ? fmt(e.score) : ''),
        approx ? h('td', { class: p && !exactIds.has(p.id) ? 'miss' : '' }, p ? idLink(p.id) : '') : null,
        approx ? h('td', { class: 'num' }, p ? fmt(p.score) : '') : null));
    }
    let recall = null;
    if (approx && exact.length) {
      const hit = approx.filter((p) => exactIds.has(p.id)).length;
      recall = `approximate recall@${exact.length}: ${hit}/${exact.length}`;
    }
    const approxNote = approx === undefined ? 'this server lists exact neighbours only'
      : approx === null ? 'no approximate index is built for this space (exact search)' : `index ${it.index || '?'} · ${recall}`;
    fill($('#tab-item'),
      h('h2', {}, it.id),
      it.text && it.text !== it.id ? h('p', { class: 'item-text' }, it.text) : null,
      h('h3', {}, 'Metadata'),
      metadataTable(it.metadata),
      h('h3', {}, 'Nearest neighbours'),
      h('p', { class: 'meta' }, approxNote),
      h('table', { class: 'neighbours' },
        h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', { colspan: '2' }, 'exact'),
          approx ? h('th', { colspan: '2' }, `approximate${it.index ? ` (${it.index})` : ''}`) : null)),
        h('tbody', {}, rows)));
    showTab('item');
    return true;
  });
  if (ok) status(summary());
}

function setOps(oldIds, newIds) {
  const o = new Set(oldIds);
  const n = new Set(newIds);
  const kept = oldIds.filter((x) => n.has(x));
  const lost = oldIds.filter((x) => !n.has(x));
  const gained = newIds.filter((x) => !o.has(x));
  const union = new Set([...oldIds, ...newIds]).size;
  return { kept, lost, gained, jaccard: union ? kept.length / union : null };
}

async function openCompareItem(id) {
  const a = S.a.name;
  const b = S.b.name;
  status(`comparing the neighbours of ${id}…`, 'busy');
  const ok = await task(`compare ${id}`, async () => {
    let r = await api.compareItem(a, b, id, COMPARE_K);
    if (!r) { // an older server: the moved row, or both items' neighbours
      const row = S.moved.find((m) => String(m.id) === id);
      if (row) {
        r = { id, ...setOps(row.old, row.new), jaccard: row.jaccard };
      } else {
        const [ia, ib] = await Promise.all([api.item(a, id), api.item(b, id)]);
        const ids = (it) => (it.exact || it.neighbours || []).map((n) => n.id);
        r = { id, ...setOps(ids(ia), ids(ib)) };
      }
    }
    if (S.selectedId !== id) return true;
    const col = (title, ids, cls) => h('div', { class: `col ${cls}` }, h('h3', {}, `${title} (${ids.length})`),
      ids.length ? h('ul', { class: 'idlist' }, ids.map((x) => h('li', {}, idLink(String(x))))) : h('p', { class: 'empty' }, '—'));
    fill($('#tab-item'),
      h('h2', {}, id),
      h('p', { class: 'meta' }, `neighbourhood Jaccard@${COMPARE_K} between ${a} and ${b}: `, h('b', {}, fmt(r.jaccard))),
      h('div', { class: 'cols' },
        col('kept', r.kept || [], 'kept'),
        col(`lost (only in ${a})`, r.lost || [], 'lost'),
        col(`gained (only in ${b})`, r.gained || [], 'gained')),
      h('p', {}, h('button', { type: 'button', onclick: () => openItem(id) }, `open ${id} in ${a}`)));
    showTab('item');
    return true;
  });
  if (ok) status(summary());
}

// ------------------------------------------------------------------ wiring
function wire() {
  $('#space').addEventListener('change', (e) => {
    S.bName = S.bName === e.target.value ? null : S.bName;
    loadSpace(e.target.value);
  });
  $('#layout').addEventListener('change', (e) => {
    S.method = e.target.value;
    if (S.a) loadSpace(S.a.name, { keepSelection: true });
  });
  $('#colour').addEventListener('change', (e) => {
    S.colour = e.target.value;
    applyStyle();
  });
  $('#size-by').addEventListener('change', (e) => {
    S.size = e.target.checked;
    applyStyle();
  });
  $('#space-b').addEventListener('change', (e) => {
    setSpaceB(e.target.value);
  });
  $('#view-b').addEventListener('change', async (e) => {
    S.view = e.target.value;
    hook.view = S.view;
    await task('two-space view', async () => {
      await showTwoSpaceView();
      if (S.view === 'side' && mapB) await mapB.setStyle(S.style);
    });
    saveUrl();
  });
  let pending = null;
  $('#morph-t').addEventListener('input', (e) => {
    const t = Number(e.target.value) / 1000;
    if (pending === null) {
      pending = requestAnimationFrame(() => {
        pending = null;
        morphTo(t, true);
      });
    }
  });
  $('#morph-t').addEventListener('change', (e) => {
    task('morph', () => morphTo(Number(e.target.value) / 1000, false));
  });
  $('#search').addEventListener('submit', (e) => {
    e.preventDefault();
    runSearch();
  });
  $('#mode').addEventListener('change', (e) => {
    $('#query').placeholder = e.target.value === 'id' ? 'an item id…' : 'search…';
  });
  for (const b of document.querySelectorAll('.tabs [data-tab]')) {
    b.addEventListener('click', () => showTab(b.dataset.tab));
  }
  window.addEventListener('error', (e) => report(e.error || e.message, 'page error'));
  window.addEventListener('unhandledrejection', (e) => report(e.reason, 'page error'));
}

async function boot() {
  wire();
  const kind = chooseRenderer(params.get('renderer'));
  mapA = new MapView($('#map-a'), { kind, onPick, onLasso, onClear });
  hook.renderer = mapA.kind;
  $('#hint').textContent = mapA.kind === 'webgl'
    ? 'wheel: zoom · drag: pan · shift + drag: lasso · click: open · double-click or Esc: clear'
    : 'wheel: zoom · drag: pan · click: open · double-click or Esc: clear (Canvas2D renderer)';
  if (mapA.renderer && mapA.fallbackReason) status(mapA.fallbackReason);
  S.method = ['pca', 'umap'].includes(params.get('layout')) ? params.get('layout') : 'pca';
  S.colour = params.get('colour') || '';
  S.size = params.get('size') === '1';
  S.view = params.get('view') === 'morph' ? 'morph' : 'side';
  const spaces = await task('spaces', () => api.spaces());
  if (!spaces) {
    hook.ready = true;
    return;
  }
  S.spaces = spaces;
  if (!spaces.length) {
    fillPickers();
    status('this store has no spaces yet: `repspace ingest` some');
    hook.ready = true;
    return;
  }
  const names = new Set(spaces.map((s) => s.name));
  const first = names.has(params.get('space')) ? params.get('space') : spaces[0].name;
  const b = params.get('b');
  S.bName = b && names.has(b) && b !== first ? b : null;
  await loadSpace(first);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
