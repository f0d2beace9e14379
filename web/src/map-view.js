// One map on the page: a renderer (WebGL, or the Canvas2D fallback), its title and its legend.

import { renderLegend } from './colour.js';
import { h } from './dom.js';
import { CanvasRenderer } from './renderer-canvas.js';
import { WebGLRenderer, webglAvailable } from './renderer-webgl.js';

/** 'canvas' when asked for (?renderer=canvas) or when WebGL is missing; otherwise 'webgl'. */
export function chooseRenderer(asked) {
  if (asked === 'canvas') return 'canvas';
  return webglAvailable() ? 'webgl' : 'canvas';
}

export class MapView {
  /**
   * @param {HTMLElement} root  an element with class "map" (position: relative; sized by CSS)
   * @param {{kind: string, onPick: Function, onLasso: Function, onClear: Function}} options
   */
  constructor(root, { kind, onPick, onLasso, onClear }) {
    this.root = root;
    this.title = h('div', { class: 'map-title' });
    this.legend = h('div', { class: 'legend', hidden: true });
    root.append(this.title, this.legend);
    const handlers = {
      onPick: (row) => onPick(row, this),
      onLasso: (rows) => onLasso(rows, this),
      onClear: () => onClear(this),
    };
    this.renderer = null;
    if (kind === 'webgl') {
      try {
        this.renderer = new WebGLRenderer(root, handlers);
      } catch (e) {
        this.fallbackReason = `WebGL failed (${e.message}); drawing with Canvas2D`;
      }
    }
    if (!this.renderer) this.renderer = new CanvasRenderer(root, handlers);
    this.points = 0;
  }

  get kind() {
    return this.renderer.kind;
  }

  setTitle(text) {
    this.title.textContent = text;
  }

  async setData(x, y, style) {
    this.points = x.length;
    renderLegend(this.legend, style.legend);
    await this.renderer.setData({ x, y, ...style });
  }

  setPositions(x, y, options) {
    return this.renderer.setPositions(x, y, options);
  }

  async setStyle(style) {
    renderLegend(this.legend, style.legend);
    await this.renderer.setStyle(style);
  }

  setHighlight(rows) {
    this.renderer.setHighlight(rows);
  }

  setSelected(row) {
    this.renderer.setSelected(row);
  }

  settled() {
    return this.renderer.settled();
  }

  /** The point's position in the viewport (CSS pixels, for a click), or null when it is not drawn. */
  screenPosition(row) {
    const p = this.renderer.screenPosition(row);
    if (!p) return null;
    const rect = this.renderer.canvas.getBoundingClientRect();
    return [rect.left + p[0], rect.top + p[1]];
  }

  resize() {
    this.renderer.resize();
  }
}
