// Layout arithmetic on typed arrays: normalising a layout to [-1, 1], aligning a second layout
// to the first by id, and rotating it onto the first (2-D Procrustes).

const MARGIN = 0.95; // the layout fills this share of [-1, 1]

/**
 * Interleaved [x0, y0, x1, y1, ...] to two Float32Arrays in [-MARGIN, MARGIN], centred, with the
 * aspect ratio kept. Non-finite coordinates become NaN (not drawn).
 */
export function normalise(xy, count) {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < count; i++) {
    const a = xy[2 * i];
    const b = xy[2 * i + 1];
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    if (a < x0) x0 = a;
    if (a > x1) x1 = a;
    if (b < y0) y0 = b;
    if (b > y1) y1 = b;
  }
  const x = new Float32Array(count);
  const y = new Float32Array(count);
  if (!(x1 >= x0)) {
    x.fill(Number.NaN);
    y.fill(Number.NaN);
    return { x, y };
  }
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const half = Math.max(x1 - x0, y1 - y0) / 2 || 1;
  const s = MARGIN / half;
  for (let i = 0; i < count; i++) {
    const a = xy[2 * i];
    const b = xy[2 * i + 1];
    if (!Number.isFinite(a) || !Number.isFinite(b)) {
      x[i] = Number.NaN;
      y[i] = Number.NaN;
    } else {
      x[i] = (a - cx) * s;
      y[i] = (b - cy) * s;
    }
  }
  return { x, y };
}

/** For each id of `ids`, its row in `other` (an id -> row Map), or -1: an Int32Array. */
export function alignRows(ids, otherIndex) {
  const rows = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const r = otherIndex.get(ids[i]);
    rows[i] = r === undefined ? -1 : r;
  }
  return rows;
}

/** Gather `values` (a typed array in the other layout's rows) into this layout's rows; NaN where absent. */
export function gather(values, rows) {
  const out = new Float32Array(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = rows[i] < 0 ? Number.NaN : values[rows[i]];
  return out;
}

/**
 * Rotate (and reflect if that fits better) layout B onto layout A, both in A's rows (NaN where
 * absent), about their centroids over the shared points; then normalise the result like A.
 * The 2-D orthogonal Procrustes problem has a closed form: the best rotation angle is
 * atan2(sum(bx ay - by ax), sum(bx ax + by ay)) over the centred points.
 */
export function procrustes(ax, ay, bx, by) {
  const n = ax.length;
  let m = 0;
  let max = 0;
  let may = 0;
  let mbx = 0;
  let mby = 0;
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(ax[i]) || Number.isNaN(bx[i])) continue;
    m++;
    max += ax[i];
    may += ay[i];
    mbx += bx[i];
    mby += by[i];
  }
  const ox = new Float32Array(n);
  const oy = new Float32Array(n);
  if (!m) {
    ox.set(bx);
    oy.set(by);
    return { x: ox, y: oy };
  }
  max /= m;
  may /= m;
  mbx /= m;
  mby /= m;
  let dot = 0;
  let cross = 0;
  let dotR = 0; // with B reflected (x -> -x)
  let crossR = 0;
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(ax[i]) || Number.isNaN(bx[i])) continue;
    const px = ax[i] - max;
    const py = ay[i] - may;
    const qx = bx[i] - mbx;
    const qy = by[i] - mby;
    dot += qx * px + qy * py;
    cross += qx * py - qy * px;
    dotR += -qx * px + qy * py;
    crossR += -qx * py - qy * px;
  }
  const reflect = Math.hypot(dotR, crossR) > Math.hypot(dot, cross);
  const theta = reflect ? Math.atan2(crossR, dotR) : Math.atan2(cross, dot);
  const c = Math.cos(theta);
  const s = Math.sin(theta);
  const xy = new Float32Array(2 * n);
  for (let i = 0; i < n; i++) {
    const qx = (reflect ? -1 : 1) * (bx[i] - mbx);
    const qy = by[i] - mby;
    xy[2 * i] = c * qx - s * qy;
    xy[2 * i + 1] = s * qx + c * qy;
  }
  return normalise(xy, n);
}

/** (1 - t) a + t b, element-wise, into `out` (NaN where either is NaN). */
export function lerp(a, b, t, out) {
  for (let i = 0; i < a.length; i++) out[i] = a[i] + t * (b[i] - a[i]);
  return out;
}
