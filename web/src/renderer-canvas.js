// The Canvas2D map, for browsers without WebGL (or ?renderer=canvas): the same interface as
// renderer-webgl.js. Points are written straight into an ImageData (a Uint32 per pixel, no
// per-point canvas calls), so a million points redraw in tens of milliseconds; the highlighted and
// selected points are drawn on top as rings. Wheel zooms about the cursor, drag pans, a click
// picks the nearest point on screen, a double click or Escape clears.

import { h } from './dom.js';
import { HIGHLIGHT, baseSize } from './renderer-webgl.js';

const BACKGROUND = 0xffffffff;
const PICK_RADIUS = 8; // CSS pixels
const CLICK_SLOP = 4;

/** '#rrggbb' -> a Uint32 pixel in the host's byte order (RGBA in memory). */
function pixel(hex, alpha = 255) {
  const v = Number.parseInt(hex.slice(1), 16);
  const r = (v >> 16) & 255;
  const g = (v >> 8) & 255;
  const b = v & 255;
  const bytes = new Uint8Array([r, g, b, alpha]);
  return new Uint32Array(bytes.buffer)[0];
}

/** Offsets (dx, dy) of a filled disc of diameter d pixels. */
function disc(d) {
  const out = [];
  const lo = -Math.floor((d - 1) / 2);
  const c = lo + (d - 1) / 2; // the block's centre
  const r2 = (d / 2) * (d / 2);
  for (let dy = lo; dy < lo + d; dy++) {
    for (let dx = lo; dx < lo + d; dx++) {
      if (d <= 2 || (dx - c) ** 2 + (dy - c) ** 2 <= r2) out.push(dx, dy);
    }
  }
  return Int32Array.from(out);
}

export class CanvasRenderer {
  constructor(container, handlers) {
    this.kind = 'canvas';
    this.handlers = handlers;
    this.container = container;
    this.canvas = h('canvas', { class: 'map-canvas', tabindex: '0' });
    container.prepend(this.canvas);
    this.ctx = this.canvas.getContext('2d');
    this.n = 0;
    this.x = new Float32Array(0);
    this.y = new Float32Array(0);
    this.codes = new Uint16Array(0);
    this.colours = new Uint32Array([pixel('#3d6fb4')]);
    this.palette = ['#3d6fb4'];
    this.sizes = null;
    this.highlight = [];
    this.selected = -1;
    this.view = { scale: 1, tx: 0, ty: 0 }; // screen = centre + radius * scale * (x, -y) + (tx, ty)
    this.frame = 0;
    this.discs = new Map();
    this._listen();
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(container);
    this.resize();
  }

  // ------------------------------------------------------------------ the view
  _geometry() {
    const w = this.cssWidth;
    const hgt = this.cssHeight;
    return { cx: w / 2, cy: hgt / 2, r: (Math.min(w, hgt) / 2) * this.view.scale };
  }

  screenPosition(row) {
    if (row < 0 || row >= this.n || !Number.isFinite(this.x[row])) return null;
    const { cx, cy, r } = this._geometry();
    return [cx + this.view.tx + r * this.x[row], cy + this.view.ty - r * this.y[row]];
  }

  _nearest(px, py) {
    const { cx, cy, r } = this._geometry();
    const ox = cx + this.view.tx;
    const oy = cy + this.view.ty;
    let best = -1;
    let bestD = PICK_RADIUS * PICK_RADIUS;
    for (let i = 0; i < this.n; i++) {
      const dx = ox + r * this.x[i] - px;
      const dy = oy - r * this.y[i] - py;
      const d = dx * dx + dy * dy;
      if (d < bestD) {
        bestD = d;
        best = i;
      }
    }
    return best;
  }

  _listen() {
    const c = this.canvas;
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const rect = c.getBoundingClientRect();
      const px = e.clientX - rect.left;
      const py = e.clientY - rect.top;
      const factor = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015));
      const scale = Math.min(2000, Math.max(0.2, this.view.scale * factor));
      const k = scale / this.view.scale;
      // keep the point under the cursor where it is
      this.view.tx = (px - this.cssWidth / 2) - k * (px - this.cssWidth / 2 - this.view.tx);
      this.view.ty = (py - this.cssHeight / 2) - k * (py - this.cssHeight / 2 - this.view.ty);
      this.view.scale = scale;
      this.redraw();
    }, { passive: false });
    let drag = null;
    c.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      c.setPointerCapture(e.pointerId);
      drag = { x: e.clientX, y: e.clientY, tx: this.view.tx, ty: this.view.ty, moved: false };
    });
    c.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < CLICK_SLOP) return;
      drag.moved = true;
      c.classList.add('dragging');
      this.view.tx = drag.tx + dx;
      this.view.ty = drag.ty + dy;
      this.redraw();
    });
    const end = (e) => {
      if (!drag) return;
      const wasClick = !drag.moved;
      drag = null;
      c.classList.remove('dragging');
      if (wasClick && e.type === 'pointerup') {
        const rect = c.getBoundingClientRect();
        const row = this._nearest(e.clientX - rect.left, e.clientY - rect.top);
        if (row >= 0) this.handlers.onPick(row);
      }
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('dblclick', () => this.handlers.onClear());
    c.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') this.handlers.onClear();
    });
  }

  // ------------------------------------------------------------------ data
  setData({ x, y, codes, palette, sizes }) {
    this.n = x.length;
    this.highlight = [];
    this.selected = -1;
    this.view = { scale: 1, tx: 0, ty: 0 };
    this.x = x;
    this.y = y;
    return this.setStyle({ codes, palette, sizes });
  }

  setPositions(x, y) {
    this.x = x;
    this.y = y;
    return this.redraw();
  }

  setStyle({ codes, palette, sizes }) {
    this.codes = codes.length === this.n ? codes : new Uint16Array(this.n);
    this.palette = palette;
    this.colours = Uint32Array.from(palette, (c) => pixel(c));
    this.sizes = sizes || null;
    return this.redraw();
  }

  setHighlight(rows) {
    this.highlight = Array.from(rows);
    this.redraw();
  }

  setSelected(row) {
    this.selected = row ?? -1;
    this.redraw();
  }

  settled() {
    return this.pending || Promise.resolve();
  }

  resize() {
    const rect = this.container.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.cssWidth = Math.max(1, Math.floor(rect.width));
    this.cssHeight = Math.max(1, Math.floor(rect.height));
    this.dpr = dpr;
    this.canvas.style.width = `${this.cssWidth}px`;
    this.canvas.style.height = `${this.cssHeight}px`;
    this.canvas.width = Math.round(this.cssWidth * dpr);
    this.canvas.height = Math.round(this.cssHeight * dpr);
    this.image = null;
    this.redraw();
  }

  /** Draw at the next animation frame (one frame however many calls); resolves once drawn. */
  redraw() {
    if (!this.pending) {
      this.pending = new Promise((resolve) => {
        requestAnimationFrame(() => {
          this.pending = null;
          this._render();
          resolve();
        });
      });
    }
    return this.pending;
  }

  _disc(d) {
    let o = this.discs.get(d);
    if (!o) {
      o = disc(d);
      this.discs.set(d, o);
    }
    return o;
  }

  _render() {
    const W = this.canvas.width;
    const H = this.canvas.height;
    if (!this.image || this.image.width !== W || this.image.height !== H) {
      this.image = this.ctx.createImageData(W, H);
      this.pixels = new Uint32Array(this.image.data.buffer);
    }
    const px = this.pixels;
    px.fill(BACKGROUND);
    const dpr = this.dpr;
    const { cx, cy, r } = this._geometry();
    const ox = (cx + this.view.tx) * dpr;
    const oy = (cy + this.view.ty) * dpr;
    const rr = r * dpr;
    const zoomGrow = Math.min(3, Math.max(1, Math.asinh(this.view.scale)));
    const base = baseSize(this.n) * dpr * zoomGrow;
    const nSizes = 8;
    const discs = [];
    for (let s = 0; s < nSizes; s++) discs.push(this._disc(Math.max(1, Math.round(base * (0.6 + (3 * s) / (nSizes - 1))))));
    const plainDisc = this._disc(Math.max(1, Math.round(base)));
    const { x, y, codes, colours, sizes } = this;
    const last = colours.length - 1;
    for (let i = 0; i < this.n; i++) {
      const sx = Math.round(ox + rr * x[i]);
      const sy = Math.round(oy - rr * y[i]);
      if (!(sx > -20 && sx < W + 20 && sy > -20 && sy < H + 20)) continue; // also skips NaN
      const colour = colours[Math.min(codes[i], last)];
      const d = sizes ? discs[Math.min(nSizes - 1, Math.max(0, Math.round((sizes[i] || 0) * (nSizes - 1))))] : plainDisc;
      for (let k = 0; k < d.length; k += 2) {
        const qx = sx + d[k];
        const qy = sy + d[k + 1];
        if (qx >= 0 && qx < W && qy >= 0 && qy < H) px[qy * W + qx] = colour;
      }
    }
    this.ctx.putImageData(this.image, 0, 0);
    // emphasised points on top: rings in the highlight colour, the selected one larger and dark
    const ctx = this.ctx;
    ctx.save();
    ctx.scale(dpr, dpr);
    const ring = (row, radius, stroke, width) => {
      const p = this.screenPosition(row);
      if (!p) return;
      ctx.beginPath();
      ctx.arc(p[0], p[1], radius, 0, 2 * Math.PI);
      ctx.fillStyle = this.palette[Math.min(codes[row], last)] || '#3d6fb4';
      ctx.fill();
      ctx.lineWidth = width;
      ctx.strokeStyle = stroke;
      ctx.stroke();
    };
    const b = baseSize(this.n) * zoomGrow;
    for (const row of this.highlight) ring(row, b / 2 + 3, HIGHLIGHT, 2);
    if (this.selected >= 0) ring(this.selected, b / 2 + 5, '#111111', 2.5);
    ctx.restore();
  }

  destroy() {
    this.observer.disconnect();
    this.canvas.remove();
  }
}
