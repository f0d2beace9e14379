// The repspace HTTP API, as the explorer calls it (same origin, paths relative to the page).
//
// Every failure becomes an ApiError with one line of text: the server's {"error": ...} when it sent
// one. `missing` is true when the route itself does not exist on the server (a 404 or 405 without
// {"error": ...}, as servers before every error had that shape answered): callers use it to fall back
// to older routes.
//
// Ids are data: any text, "/", "?", "#", "%" and "." included. They travel percent-encoded in the
// query string (`items?id=...`), never as a path segment, which a browser would resolve when it is
// "." or "..".

const API = 'api/v1';
const enc = encodeURIComponent;

export class ApiError extends Error {
  constructor(status, message, missing = false) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.missing = missing;
  }
}

async function request(path, { method = 'GET', body, signal } = {}) {
  let res;
  try {
    res = await fetch(`${API}/${path}`, {
      method,
      signal,
      headers: body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e && e.name === 'AbortError') throw e;
    throw new ApiError(0, `the server did not answer (${e && e.message ? e.message : e})`);
  }
  if (!res.ok) {
    let message = `${res.status} ${res.statusText || 'error'} from ${path.split('?')[0]}`;
    let missing = false;
    try {
      const j = await res.json();
      if (j && typeof j.error === 'string') message = j.error;
      else missing = res.status === 404 || res.status === 405;
    } catch {
      missing = res.status === 404 || res.status === 405;
    }
    throw new ApiError(res.status, message.split('\n')[0], missing);
  }
  return res;
}

const getJSON = async (path, opts) => (await request(path, opts)).json();
const postJSON = async (path, body, opts) => (await request(path, { ...opts, method: 'POST', body })).json();

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function float32LE(buffer) {
  if (LITTLE_ENDIAN) return new Float32Array(buffer);
  const view = new DataView(buffer);
  const out = new Float32Array(buffer.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export const spaces = (opts) => getJSON('spaces', opts);

/**
 * A space's 2-D layout: {xy: Float32Array [x0, y0, x1, y1, ...] in row order, count, generation, ids|null}.
 * Asks for raw float32 first (no ids: they come after the first frame); a server without
 * format=f32 answers 400 and the JSON layout (with ids) is read instead.
 */
export async function map(space, method, opts) {
  const base = `spaces/${enc(space)}/map?method=${enc(method)}`;
  try {
    const res = await request(`${base}&format=f32`, opts);
    const xy = float32LE(await res.arrayBuffer());
    const header = res.headers.get('x-repspace-count');
    const count = header === null ? xy.length / 2 : Number(header);
    if (xy.length !== 2 * count) throw new ApiError(0, `the map of ${space} has ${xy.length} floats for ${count} points`);
    const gen = res.headers.get('x-repspace-generation');
    return { xy, count, generation: gen === null ? null : Number(gen), ids: null };
  } catch (e) {
    if (!(e instanceof ApiError) || !(e.missing || e.status === 400 || e.status === 422)) throw e;
  }
  const j = await getJSON(`${base}&format=json`, opts);
  const count = j.ids.length;
  const xy = new Float32Array(2 * count);
  for (let i = 0; i < count; i++) {
    xy[2 * i] = j.x[i] ?? Number.NaN;
    xy[2 * i + 1] = j.y[i] ?? Number.NaN;
  }
  return { xy, count, generation: j.generation ?? null, ids: j.ids };
}

/** The ids of a layout's rows: {generation, ids} (format=ids, or the JSON layout on older servers). */
export async function mapIds(space, method, opts) {
  const base = `spaces/${enc(space)}/map?method=${enc(method)}`;
  try {
    return await getJSON(`${base}&format=ids`, opts);
  } catch (e) {
    if (!(e instanceof ApiError) || !(e.missing || e.status === 400 || e.status === 422)) throw e;
  }
  const j = await getJSON(`${base}&format=json`, opts);
  return { generation: j.generation ?? null, ids: j.ids };
}

/** {fields: [{name, kind, count}], overlays: [{name, label}]}, or null when the server has no /fields. */
export async function fields(space, opts) {
  try {
    return await getJSON(`spaces/${enc(space)}/fields`, opts);
  } catch (e) {
    if (e instanceof ApiError && e.missing) return null;
    throw e;
  }
}

/** One column aligned with the map's rows: {name, kind, values} or {name, kind: 'category', categories, codes}. */
export const column = (space, name, method, opts) =>
  getJSON(`spaces/${enc(space)}/column?name=${enc(name)}&method=${enc(method)}`, opts);

export const search = (space, body, opts) => postJSON(`spaces/${enc(space)}/search`, body, opts);

export const item = (space, id, opts) => getJSON(`spaces/${enc(space)}/items?id=${enc(id)}`, opts);

export const compare = (a, b, changed = 50, k = 10, opts) =>
  getJSON(`compare/${enc(a)}/${enc(b)}?changed=${changed}&k=${k}`, opts);

/** {k, mean, values} aligned with a's map rows, or null when the server has no such route. */
export async function compareJaccard(a, b, k = 10, method = 'pca', opts = {}) {
  try {
    return await getJSON(`compare/${enc(a)}/${enc(b)}/jaccard?k=${k}&method=${enc(method)}`, opts);
  } catch (e) {
    if (e instanceof ApiError && e.missing) return null;
    throw e;
  }
}

/** {id, jaccard, kept, lost, gained, a, b}, or null when the server has no such route. */
export async function compareItem(a, b, id, k = 10, opts) {
  try {
    return await getJSON(`compare/${enc(a)}/${enc(b)}/items?id=${enc(id)}&k=${k}`, opts);
  } catch (e) {
    if (e instanceof ApiError && e.missing) return null;
    throw e;
  }
}

/** {a: hits, b: hits, mapped: hits|null, map}, or null when the server has no such route. */
export async function compareSearch(a, b, body, opts) {
  try {
    return await postJSON(`compare/${enc(a)}/${enc(b)}/search`, body, opts);
  } catch (e) {
    if (e instanceof ApiError && e.missing) return null;
    throw e;
  }
}
