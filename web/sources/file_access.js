// @ts-check
// Random access to a .vor file opened on the page, as `vor serve` gives it to a served one
// (sources/remote.js): the file is indexed once by the capture index compiled to wasm
// (capture_decoder.js: createCaptureIndex, the C index `vor serve` uses), reading it in chunks
// and keeping only the index, and any range of frames is then read back from the file
// (Blob.slice) with the state record that lets the decoder start there. The newest frames are
// found at once, before the index is done, by their records' checks, so a large file shows its
// last frames as soon as it is opened while the rest is indexed.
//
// Memory: the index's bound (at most 2^20 entries of 44 bytes, value snapshots within 16 MiB),
// a copy of the entries' offsets and first frame indexes (16 bytes each), and the chunk or range
// being read (at most RANGE_PART_BYTES).

import { HttpError } from './remote.js';

export const INDEX_CHUNK_BYTES = 4 << 20;
export const RANGE_PART_BYTES = 16 << 20;

/**
 * The wasm capture index (wasm/site/capture_decoder.js createCaptureIndex).
 * @typedef {object} WasmCaptureIndex
 * @property {(bytes: Uint8Array) => {frames: number, error?: string}} push
 * @property {(from?: number) => {count: number, first: number, stride: number, offset: Float64Array, index: Float64Array,
 *   start: Float64Array, min: Float32Array, max: Float32Array, sum: Float32Array, frames: Uint32Array, flame: Uint32Array}} entries
 * @property {() => {finished: boolean, randomAccess: boolean, header: boolean, frames: number, bytes: number}} flags
 * @property {() => Uint8Array | null} header
 * @property {(e: number) => {from: number, snapshot: number} | null} stateSource
 * @property {(e: number, snapshot: number, bytes: Uint8Array) => Uint8Array | null} state
 * @property {() => Uint8Array | null} declarations
 * @property {(bytes: Uint8Array) => {start: number, end: number} | null} findRecords
 * @property {() => void} [free]
 */

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.byteLength; }
  return out;
}

/**
 * @param {Blob & {name?: string}} file
 * @param {WasmCaptureIndex} ix
 * @returns {import('./remote.js').CaptureAccess & {indexStep: () => Promise<boolean>, indexedBytes: () => number, size: number}}
 */
export function createFileAccess(file, ix) {
  let read = 0; // bytes given to the index so far
  let failed = '';
  // the entries' byte offsets and first frame indexes, copied as they come
  let offsets = new Float64Array(0), firsts = new Float64Array(0), known = 0, stride = 1;
  /** @param {number} a @param {number} b */
  const slice = async (a, b) => new Uint8Array(await file.slice(a, b).arrayBuffer());

  // brings the offsets and first frame indexes up to date (from the last entry, which may have grown)
  const refresh = () => {
    const peek = ix.entries(0x7fffffff);
    if (peek.stride !== stride) { known = 0; stride = peek.stride; }
    const e = ix.entries(Math.max(0, known - 1));
    const n = e.first + e.offset.length;
    if (offsets.length < n) {
      const o = new Float64Array(Math.max(n, offsets.length * 2)); o.set(offsets.subarray(0, e.first)); offsets = o;
      const f = new Float64Array(Math.max(n, firsts.length * 2)); f.set(firsts.subarray(0, e.first)); firsts = f;
    }
    offsets.set(e.offset, e.first);
    firsts.set(e.index, e.first);
    known = n;
  };
  /** The last entry whose first frame is at or before `frame` (0 when none). @param {number} frame */
  const entryOf = (frame) => {
    let lo = 0, hi = known;
    while (lo < hi) { const m = (lo + hi) >> 1; if (firsts[m] <= frame) lo = m + 1; else hi = m; }
    return Math.max(0, lo - 1);
  };
  const header = () => {
    const h = ix.header();
    if (!h) throw new HttpError(409, 'the file has no complete capture header');
    return h;
  };

  return {
    name: file.name || 'dropped file',
    live: false,
    size: file.size,
    indexedBytes: () => read,
    /** Indexes the next chunk; false when the whole file was read (or indexing failed). */
    async indexStep() {
      if (failed || read >= file.size) return false;
      const bytes = await slice(read, Math.min(file.size, read + INDEX_CHUNK_BYTES));
      read += bytes.byteLength;
      const r = ix.push(bytes);
      if (r.error) failed = r.error;
      return !failed && read < file.size;
    },
    async index(from) {
      if (failed) throw new HttpError(422, `unreadable capture: ${failed}`);
      const f = ix.flags();
      refresh();
      const e = ix.entries(from);
      return {
        finished: f.finished, randomAccess: f.randomAccess, atEnd: read >= file.size, stride: e.stride, count: e.count,
        first: e.first, n: e.count - e.first, frames: f.frames, bytesIndexed: f.bytes, fileBytes: file.size, generation: 1,
        entries: e,
      };
    },
    async frames(a, b) {
      if (!ix.flags().randomAccess) throw new HttpError(409, 'this capture cannot be read from the middle (format 1.0)');
      refresh();
      if (known === 0) throw new HttpError(416, `frame ${a} is not indexed (yet)`);
      const e0 = entryOf(a);
      let e1 = entryOf(b) + 1;
      const endOf = (/** @type {number} */ e) => (e < known ? offsets[e] : ix.flags().bytes);
      let next = null;
      while (e1 > e0 + 1 && endOf(e1) - offsets[e0] > RANGE_PART_BYTES) e1 = e0 + 1 + ((e1 - e0 - 1) >> 1);
      if (e1 < known && firsts[e1] <= b) next = firsts[e1];
      const src = ix.stateSource(e0);
      if (!src) throw new HttpError(500, 'no state for this range');
      const state = ix.state(e0, src.snapshot, await slice(src.from, offsets[e0]));
      if (!state) throw new HttpError(500, 'cannot compute the state before this range');
      const records = await slice(offsets[e0], endOf(e1));
      return { stream: concat([header(), state, records]), first: firsts[e0], next };
    },
    async tail(bytes) {
      const h = header();
      const start = Math.max(h.byteLength, file.size - bytes);
      const buf = await slice(start, file.size);
      const found = ix.findRecords(buf);
      const decls = ix.declarations() ?? new Uint8Array(0);
      if (!found) return { stream: concat([h, decls]), end: start, header: '', valuesExact: false };
      return { stream: concat([h, decls, buf.subarray(found.start, found.end)]), end: start + found.end, header: '', valuesExact: false };
    },
    close() { ix.free?.(); },
  };
}
