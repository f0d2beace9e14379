// The WebGL map: regl-scatterplot (pan and zoom with the mouse wheel and drag, lasso with
// shift + drag, click to pick, double click or Escape to clear).
//
// Every renderer has the same small interface (see renderer-canvas.js for the other):
//   setData({x, y, codes, palette, sizes})  positions in [-1, 1] (NaN: not drawn) and style
//   setPositions(x, y, {quick})             new positions, same points (quick: keep the old pick index)
//   setStyle({codes, palette, sizes})       new colours / sizes, same positions
//   setHighlight(rows), setSelected(row)    emphasised points
//   screenPosition(row) -> [x, y]           CSS pixels from the canvas' top left corner, or null
//   resize(), destroy()
// and calls handlers.onPick(row), handlers.onLasso(rows), handlers.onClear().

import createScatterplot from 'regl-scatterplot';

import { h } from './dom.js';

export const HIGHLIGHT = '#e4572e';
const FAR = 1e4; // where points without a position are put: far outside the view
const SIZE_STEPS = 24;

/** Whether this browser gives a WebGL context at all. */
export function webglAvailable() {
  try {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl');
    if (!gl) return false;
    const lose = gl.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext();
    return true;
  } catch {
    return false;
  }
}

/** Base point size in CSS pixels for n points. */
export function baseSize(n) {
  if (n <= 5_000) return 6;
  if (n <= 50_000) return 3;
  if (n <= 500_000) return 2;
  return 1;
}

export class WebGLRenderer {
  constructor(container, handlers) {
    this.kind = 'webgl';
    this.handlers = handlers;
    this.container = container;
    this.canvas = h('canvas', { class: 'map-canvas' });
    container.prepend(this.canvas);
    const { width, height } = container.getBoundingClientRect();
    this.sp = createScatterplot({
      canvas: this.canvas,
      width: Math.max(1, Math.floor(width)),
      height: Math.max(1, Math.floor(height)),
      backgroundColor: '#ffffff',
      pointColor: '#3d6fb4',
      pointColorActive: HIGHLIGHT,
      pointColorHover: '#111111',
      pointSize: 4,
      pointSizeSelected: 3,
      pointOutlineWidth: 2,
      lassoColor: [0.89, 0.34, 0.18, 1],
      lassoMinDelay: 10,
      lassoMinDist: 2,
      opacity: 0.85,
      deselectOnDblClick: true,
      deselectOnEscape: true,
    });
    this.n = 0;
    this.x = null;
    this.y = null;
    this.z = null;
    this.w = null;
    this.highlight = [];
    this.selected = -1;
    this.index = null; // regl-scatterplot's spatial index of the current positions
    this.queue = Promise.resolve();
    this.lassoing = false;
    this.sp.subscribe('lassoStart', () => {
      this.lassoing = true;
    });
    this.sp.subscribe('lassoEnd', () => {
      this.lassoing = false;
    });
    this.sp.subscribe('select', ({ points }) => {
      if (this.lassoing || points.length !== 1) {
        this.handlers.onLasso(Array.from(points));
      } else {
        // a click: regl-scatterplot selected just that point; the caller re-applies the highlight
        this.handlers.onPick(points[0]);
      }
    });
    this.sp.subscribe('deselect', () => this.handlers.onClear());
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(container);
  }

  _emphasised() {
    const rows = this.selected >= 0 ? [...this.highlight, this.selected] : [...this.highlight];
    return rows.filter((r) => r >= 0 && r < this.n);
  }

  _draw(keepIndex) {
    const points = { x: this.xs, y: this.ys, z: this.z, w: this.w };
    const options = { zDataType: 'categorical', wDataType: 'continuous', select: this._emphasised() };
    if (keepIndex && this.index) options.spatialIndex = this.index;
    this.queue = this.queue
      .catch(() => {})
      .then(() => this.sp.draw(points, options))
      .then(() => {
        if (!keepIndex || !this.index) this.index = this.sp.get('spatialIndex');
      });
    return this.queue;
  }

  _setPositions(x, y) {
    const n = x.length;
    // NaN would upset the spatial index: unplaced points go far outside the view
    const xs = new Float32Array(n);
    const ys = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const ok = Number.isFinite(x[i]) && Number.isFinite(y[i]);
      xs[i] = ok ? x[i] : FAR;
      ys[i] = ok ? y[i] : FAR;
    }
    this.x = x;
    this.y = y;
    this.xs = xs;
    this.ys = ys;
  }

  _setStyle({ codes, palette, sizes }) {
    const n = this.n;
    this.z = codes.length === n ? codes : new Uint16Array(n);
    const base = baseSize(n);
    // one active (selected) and hover colour per palette entry, or regl-scatterplot keeps the point's own
    const active = palette.map(() => HIGHLIGHT);
    const hover = palette.map(() => '#111111');
    this.sp.set({ pointColorActive: active, pointColorHover: hover });
    if (sizes) {
      this.w = sizes;
      this.sp.set({
        pointColor: palette,
        sizeBy: 'valueB',
        pointSize: Array.from({ length: SIZE_STEPS }, (_, i) => base * (0.6 + (3 * i) / (SIZE_STEPS - 1))),
        colorBy: 'valueA',
      });
    } else {
      this.w = new Float32Array(n);
      this.sp.set({ pointColor: palette, sizeBy: null, pointSize: base, colorBy: 'valueA' });
    }
  }

  setData({ x, y, codes, palette, sizes }) {
    this.n = x.length;
    this.selected = -1;
    this.highlight = [];
    this._setPositions(x, y);
    this._setStyle({ codes, palette, sizes });
    const drawn = this._draw(false);
    this.queue = drawn.then(() => {
      this.fit(); // not awaited: it resolves at the next draw event, which an empty plot never has
    });
    return this.queue;
  }

  /** Show all of [-1, 1] x [-1, 1] whatever the canvas' shape (regl-scatterplot fits the height only). */
  fit() {
    this.sp.zoomToArea({ x: -1, y: -1, width: 2, height: 2 });
  }

  setPositions(x, y, { quick = false } = {}) {
    this._setPositions(x, y);
    return this._draw(quick);
  }

  setStyle(style) {
    this._setStyle(style);
    return this._draw(true);
  }

  setHighlight(rows) {
    this.highlight = Array.from(rows);
    this._sync();
  }

  setSelected(row) {
    this.selected = row ?? -1;
    this._sync();
  }

  _sync() {
    this.queue = this.queue.catch(() => {}).then(() => {
      if (!this.n) return;
      const rows = this._emphasised();
      if (rows.length) this.sp.select(rows, { preventEvent: true });
      else this.sp.deselect({ preventEvent: true });
    });
  }

  screenPosition(row) {
    if (!this.n || row < 0 || row >= this.n || !Number.isFinite(this.x[row])) return null;
    const p = this.sp.getScreenPosition(row);
    return p ? [p[0], p[1]] : null;
  }

  /** Resolves once every draw asked for so far is on screen. */
  settled() {
    return this.queue.catch(() => {});
  }

  resize() {
    const { width, height } = this.container.getBoundingClientRect();
    if (width < 1 || height < 1) return;
    const w = Math.floor(width);
    const hgt = Math.floor(height);
    if (w === this.width && hgt === this.height) return;
    this.width = w;
    this.height = hgt;
    // set() applies the new aspect ratio at the next frame: fit after it
    this.queue = this.queue.catch(() => {}).then(() => this.sp.set({ width: w, height: hgt })).then(() => {
      this.fit();
    });
  }

  destroy() {
    this.observer.disconnect();
    this.sp.destroy();
    this.canvas.remove();
  }
}
