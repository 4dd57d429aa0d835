// @ts-check
// Random access to a capture served by `vor serve` (native/server/http_range.c): the capture's
// index (what the overview draws), streams of frames from any frame on, the newest frames
// (tail) and the bytes that follow (a live capture). Every stream is a capture stream (header,
// state record, records: docs/FORMAT.md 4.8) that the capture decoder reads like a file.
// An access object, as sources/file_access.js makes for a file opened on the page: the capture
// session (capture_session.js) drives either.

/**
 * The index part the server sent (GET /api/captures/<id>/index).
 * @typedef {object} IndexPart
 * @property {boolean} finished       the end record was read
 * @property {boolean} randomAccess   format 1.1: ranges can be read
 * @property {boolean} atEnd          the whole file as it is now was indexed
 * @property {number} stride
 * @property {number} count           entries in all
 * @property {number} first           first entry in this part
 * @property {number} n
 * @property {number} frames          frames indexed
 * @property {number} bytesIndexed
 * @property {number} fileBytes
 * @property {number} generation      changes when the capture's index started over (a new run)
 * @property {import('../overview.js').EntryArrays} entries
 */
/**
 * What a capture session reads a capture through (remote, file_access.js).
 * @typedef {object} CaptureAccess
 * @property {string} name
 * @property {boolean} live                      may grow (a served file); a file opened on the page does not
 * @property {(from: number, signal?: AbortSignal) => Promise<IndexPart>} index
 * @property {(a: number, b: number, signal?: AbortSignal) => Promise<StreamPart>} frames   frames a..b (first part: see next)
 * @property {(bytes: number, signal?: AbortSignal) => Promise<TailPart>} tail
 * @property {(from: number, header: string, signal?: AbortSignal) => Promise<BytesPart>} [bytes]
 * @property {() => void} [close]
 */
/** @typedef {{stream: Uint8Array, first: number, next: number | null}} StreamPart   next: the frame to ask for next (cut at the size limit) */
/** @typedef {{stream: Uint8Array, end: number, header: string, valuesExact: boolean}} TailPart */
/** @typedef {{bytes: Uint8Array, end: number, size: number} | {reset: string}} BytesPart */

export class HttpError extends Error {
  /** @param {number} status @param {string} message @param {string | null} [reset] */
  constructor(status, message, reset = null) {
    super(message);
    this.status = status;
    this.reset = reset;
  }
}

/**
 * Parses an index response.
 * @param {ArrayBuffer} buf
 * @returns {IndexPart}
 */
export function parseIndexPart(buf) {
  const v = new DataView(buf);
  if (buf.byteLength < 72 || v.getUint32(0, true) !== 0x58444956) throw new Error('not a capture index (bad magic)');
  if (v.getUint32(4, true) !== 1) throw new Error(`capture index version ${v.getUint32(4, true)}; this panel reads 1`);
  const flags = v.getUint32(8, true), n = v.getUint32(24, true);
  if (buf.byteLength < 72 + 36 * n) throw new Error('capture index truncated');
  const u64 = (/** @type {number} */ o) => Number(v.getBigUint64(o, true));
  let o = 72;
  const f64 = () => { const a = new Float64Array(buf.slice(o, o + 8 * n)); o += 8 * n; return a; };
  const f32 = () => { const a = new Float32Array(buf.slice(o, o + 4 * n)); o += 4 * n; return a; };
  const u32 = () => { const a = new Uint32Array(buf.slice(o, o + 4 * n)); o += 4 * n; return a; };
  const index = f64(), start = f64(), min = f32(), max = f32(), sum = f32(), frames = u32(), flame = u32();
  return {
    finished: !!(flags & 1), randomAccess: !!(flags & 2), atEnd: !!(flags & 4),
    stride: v.getUint32(12, true), count: v.getUint32(16, true), first: v.getUint32(20, true), n,
    frames: u64(32), bytesIndexed: u64(40), fileBytes: u64(48), generation: u64(56),
    entries: { index, start, min, max, sum, frames, flame },
  };
}

/**
 * The access object for capture `id` of the server at `base` ('' for this page's origin).
 * @param {{id: string, name: string}} capture
 * @param {{base?: string, fetchImpl?: typeof fetch}} [options]
 * @returns {CaptureAccess}
 */
export function createRemoteAccess(capture, { base = '', fetchImpl = globalThis.fetch } = {}) {
  const root = `${base}/api/captures/${encodeURIComponent(capture.id)}`;
  /** @param {string} path @param {AbortSignal | undefined} signal */
  const get = async (path, signal) => {
    const res = await fetchImpl(root + path, { cache: 'no-store', signal });
    if (!res.ok) {
      let message = `HTTP ${res.status}`, reset = null;
      try { const j = await res.json(); message = j.error ?? message; reset = j.reset ?? null; } catch { /* not JSON */ }
      throw new HttpError(res.status, message, reset);
    }
    return res;
  };
  const num = (/** @type {Response} */ res, /** @type {string} */ h) => {
    const v = res.headers.get(h);
    return v === null ? null : Number(v);
  };
  return {
    name: capture.name,
    live: true,
    async index(from, signal) {
      const res = await get(`/index?from=${from}`, signal);
      return parseIndexPart(await res.arrayBuffer());
    },
    async frames(a, b, signal) {
      const res = await get(`/frames?from=${a}&to=${b}`, signal);
      return { stream: new Uint8Array(await res.arrayBuffer()), first: num(res, 'x-vor-first-frame') ?? a, next: num(res, 'x-vor-next-frame') };
    },
    async tail(bytes, signal) {
      const res = await get(`/tail?bytes=${bytes}`, signal);
      return {
        stream: new Uint8Array(await res.arrayBuffer()), end: num(res, 'x-vor-end') ?? 0,
        header: res.headers.get('x-vor-header') ?? '', valuesExact: res.headers.get('x-vor-values') === 'exact',
      };
    },
    async bytes(from, header, signal) {
      try {
        const res = await get(`/bytes?from=${from}&header=${header}`, signal);
        return { bytes: new Uint8Array(await res.arrayBuffer()), end: num(res, 'x-vor-end') ?? from, size: num(res, 'x-vor-size') ?? 0 };
      } catch (err) {
        if (err instanceof HttpError && err.status === 409 && err.reset) return { reset: err.reset };
        throw err;
      }
    },
  };
}
