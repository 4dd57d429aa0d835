// @ts-check
// Frame view parser: turns the bytes of one frame view (version 2, produced by the C side) into
// typed arrays the panel keeps. Pure: no DOM, no globals; runs in node for the unit tests.
//
// Layout (little-endian; the specification is docs/FORMAT.md section 7):
//   off  0 u32 magic 0x4D524656 ('V','F','R','M')   off  4 u32 version (2)
//   off  8 u32 total_bytes                          off 12 u32 flags (bit0: scopes present)
//   off 16 f64 frame_index   off 24 f64 start_ns   off 32 f64 duration_ns   off 40 f64 overhead_ns
//   off 48 u32 n_values  off 52 u32 n_threads  off 56 u32 n_scopes (ended)  off 60 u32 dropped_scopes
//   off 64 u32 n_open (scopes still open at the frame's end)  off 68 u32 n_drops
//   off 72  n_values  x { u32 column_id; u32 reserved; f64 value }
//           n_drops   x { u32 cause; u32 thread_id; f64 scopes }
//           n_threads x { u32 thread_id; u32 ended; u32 open }
//           zero padding to a multiple of 8
//           then, for the S = n_scopes + n_open scopes (per thread: its ended ones in end order, then its
//           open ones outermost first): f64 start_ns[S], f64 duration_ns[S], u32 site_id[S], u32 depth[S],
//           u32 parent[S] (index among the thread's scopes; 0xFFFFFFFF none, 0xFFFFFFFE unknown),
//           u32 flags[S] (bit0 open at the frame's end, bit1 unwound)
//
// The parser always copies: the caller (often C, handing a view into wasm memory that the next frame
// overwrites) may reuse its buffer as soon as parseFrameView returns. Copies of the scope arrays are one
// memcpy each (slice of an aligned ArrayBuffer), the cost the panel pays once per frame.
// Anything inconsistent throws a FrameViewError naming the field and the numbers; nothing is guessed.

export const FRAME_VIEW_MAGIC = 0x4d524656;
export const FRAME_VIEW_VERSION = 2;
export const FRAME_VIEW_HEADER_BYTES = 72;
export const FRAME_VIEW_FLAG_SCOPES = 1;
export const SCOPE_FLAG_OPEN = 1;      // still open at the frame's end (listed after the thread's ended scopes)
export const SCOPE_FLAG_UNWOUND = 2;   // closed by vor: a longjmp, exception or coroutine switch skipped its end
export const PARENT_NONE = 0xffffffff; // depth 0
export const PARENT_UNKNOWN = 0xfffffffe;

const VALUE_BYTES = 16;
const DROP_BYTES = 16;
const THREAD_BYTES = 12;
const SCOPE_BYTES = 8 + 8 + 4 + 4 + 4 + 4;

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class FrameViewError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(`frame view: ${message}`);
    this.name = 'FrameViewError';
  }
}

/** @param {number} v */
function hex32(v) {
  return '0x' + (v >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

/**
 * Size in bytes of a version-2 view with these counts (header, tables, padding, scope arrays);
 * nScopes counts every scope in the arrays, ended and open.
 * @param {number} nValues @param {number} nThreads @param {number} nScopes @param {number} [nDrops]
 */
export function frameViewByteLength(nValues, nThreads, nScopes, nDrops = 0) {
  const tables = FRAME_VIEW_HEADER_BYTES + nValues * VALUE_BYTES + nDrops * DROP_BYTES + nThreads * THREAD_BYTES;
  const padded = Math.ceil(tables / 8) * 8;
  return padded + nScopes * SCOPE_BYTES;
}

/** @param {unknown} input @returns {Uint8Array} */
function asBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (typeof SharedArrayBuffer !== 'undefined' && input instanceof SharedArrayBuffer) return new Uint8Array(input);
  throw new FrameViewError(`expected an ArrayBuffer or Uint8Array, got ${input === null ? 'null' : typeof input}`);
}

// Copies `count` elements of `Type` starting at byte `off` of `bytes` into a fresh typed array.
/**
 * @template {Float64ArrayConstructor | Uint32ArrayConstructor} C
 * @param {C} Type @param {Uint8Array} bytes @param {number} off @param {number} count @param {DataView} dv
 * @returns {InstanceType<C>}
 */
function copyArray(Type, bytes, off, count, dv) {
  const size = Type.BYTES_PER_ELEMENT;
  if (HOST_IS_LITTLE_ENDIAN) {
    const abs = bytes.byteOffset + off;
    if (abs % size === 0 && !(typeof SharedArrayBuffer !== 'undefined' && bytes.buffer instanceof SharedArrayBuffer)) {
      return /** @type {InstanceType<C>} */ (new Type(/** @type {ArrayBuffer} */ (bytes.buffer).slice(abs, abs + count * size)));
    }
    return /** @type {InstanceType<C>} */ (new Type(bytes.slice(off, off + count * size).buffer));
  }
  const out = /** @type {InstanceType<C>} */ (new Type(count));
  for (let i = 0; i < count; i++) {
    const p = off + i * size;
    out[i] = size === 8 ? dv.getFloat64(p, true) : dv.getUint32(p, true);
  }
  return out;
}

/**
 * Parses one frame view. Returns
 *   { version, flags, hasScopes, byteLength, frameIndex, startNs, durationNs, overheadNs, droppedScopes,
 *     columnIds: Uint32Array, values: Float64Array,              // n_values entries, in view order
 *     nDrops, dropCause: Uint32Array, dropThread: Uint32Array, dropCount: Float64Array,  // drops by cause
 *     threadIds: Uint32Array, threadScopeCounts: Uint32Array,    // thread table: ended scopes per thread
 *     threadOpenCounts: Uint32Array,                             //   and open scopes per thread
 *     threadFirst: Uint32Array,                                  // first scope index of each thread
 *     nScopes, nOpen,                                            // ended, open scopes (all threads)
 *     scopeStart: Float64Array, scopeDuration: Float64Array,     // nScopes + nOpen entries: per thread,
 *     scopeSite: Uint32Array, scopeDepth: Uint32Array,           //   its ended scopes (threadScopeCounts[t]
 *     scopeParent: Uint32Array, scopeFlags: Uint32Array }        //   from threadFirst[t]), then its open ones
 * scopeParent[i] is the index of scope i's parent in these arrays, or PARENT_NONE / PARENT_UNKNOWN.
 * A thread's ended scopes come first in its range, so code that walks threadFirst[t] ..
 * threadFirst[t] + threadScopeCounts[t] sees exactly the ended scopes, as with version 1.
 * Throws FrameViewError when the bytes are not a well-formed version-2 view.
 * `input` may be longer than total_bytes (a slice of a larger buffer); the rest is ignored.
 * @param {ArrayBuffer | ArrayBufferView} input
 */
export function parseFrameView(input) {
  const bytes = asBytes(input);
  const n = bytes.byteLength;
  if (n < 8) {
    throw new FrameViewError(`truncated: ${n} bytes, the header alone needs ${FRAME_VIEW_HEADER_BYTES}`);
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, n);
  const magic = dv.getUint32(0, true);
  if (magic !== FRAME_VIEW_MAGIC) {
    throw new FrameViewError(`bad magic ${hex32(magic)} (expected ${hex32(FRAME_VIEW_MAGIC)}, bytes 'VFRM')`);
  }
  const version = dv.getUint32(4, true);
  if (version !== FRAME_VIEW_VERSION) {
    throw new FrameViewError(`unsupported version ${version} (this panel reads version ${FRAME_VIEW_VERSION})`);
  }
  if (n < FRAME_VIEW_HEADER_BYTES) {
    throw new FrameViewError(`truncated: ${n} bytes, the header alone needs ${FRAME_VIEW_HEADER_BYTES}`);
  }
  const totalBytes = dv.getUint32(8, true);
  const flags = dv.getUint32(12, true);
  const frameIndex = dv.getFloat64(16, true);
  const startNs = dv.getFloat64(24, true);
  const durationNs = dv.getFloat64(32, true);
  const overheadNs = dv.getFloat64(40, true);
  const nValues = dv.getUint32(48, true);
  const nThreads = dv.getUint32(52, true);
  const nScopes = dv.getUint32(56, true);
  const droppedScopes = dv.getUint32(60, true);
  const nOpen = dv.getUint32(64, true);
  const nDrops = dv.getUint32(68, true);
  const nAll = nScopes + nOpen;

  const expected = frameViewByteLength(nValues, nThreads, nAll, nDrops);
  if (totalBytes !== expected) {
    throw new FrameViewError(
      `total_bytes ${totalBytes} does not match the layout (${nValues} values, ${nDrops} drops, ${nThreads} threads, ` +
      `${nScopes} + ${nOpen} open scopes need ${expected} bytes)`);
  }
  if (n < totalBytes) {
    throw new FrameViewError(`truncated: ${n} bytes given, total_bytes says ${totalBytes}`);
  }
  if (!Number.isFinite(frameIndex) || frameIndex < 0) {
    throw new FrameViewError(`frame_index ${frameIndex} is not a finite non-negative number`);
  }
  if (!Number.isFinite(startNs)) throw new FrameViewError(`start_ns ${startNs} is not finite`);
  if (!Number.isFinite(durationNs) || durationNs < 0) {
    throw new FrameViewError(`duration_ns ${durationNs} is not a finite non-negative number`);
  }
  if (!Number.isFinite(overheadNs) || overheadNs < 0) {
    throw new FrameViewError(`overhead_ns ${overheadNs} is not a finite non-negative number`);
  }
  const hasScopes = (flags & FRAME_VIEW_FLAG_SCOPES) !== 0;
  if (!hasScopes && nAll !== 0) {
    throw new FrameViewError(`flags bit0 (scopes present) is clear but n_scopes is ${nScopes} and n_open ${nOpen}`);
  }

  let off = FRAME_VIEW_HEADER_BYTES;
  const columnIds = new Uint32Array(nValues);
  const values = new Float64Array(nValues);
  for (let i = 0; i < nValues; i++, off += VALUE_BYTES) {
    columnIds[i] = dv.getUint32(off, true);
    values[i] = dv.getFloat64(off + 8, true); // NaN and Infinity are legal values (a diverging loss)
  }

  const dropCause = new Uint32Array(nDrops);
  const dropThread = new Uint32Array(nDrops);
  const dropCount = new Float64Array(nDrops);
  for (let i = 0; i < nDrops; i++, off += DROP_BYTES) {
    dropCause[i] = dv.getUint32(off, true);
    dropThread[i] = dv.getUint32(off + 4, true);
    dropCount[i] = dv.getFloat64(off + 8, true);
    if (!(dropCount[i] >= 0) || dropCount[i] === Infinity) {
      throw new FrameViewError(`drop ${i}: count ${dropCount[i]} is not a finite non-negative number`);
    }
  }

  const threadIds = new Uint32Array(nThreads);
  const threadScopeCounts = new Uint32Array(nThreads);
  const threadOpenCounts = new Uint32Array(nThreads);
  const threadFirst = new Uint32Array(nThreads);
  let ended = 0, open = 0;
  for (let i = 0; i < nThreads; i++, off += THREAD_BYTES) {
    threadIds[i] = dv.getUint32(off, true);
    threadScopeCounts[i] = dv.getUint32(off + 4, true);
    threadOpenCounts[i] = dv.getUint32(off + 8, true);
    threadFirst[i] = ended + open;
    ended += threadScopeCounts[i];
    open += threadOpenCounts[i];
  }
  if (ended !== nScopes || open !== nOpen) {
    throw new FrameViewError(`thread table counts ${ended} scopes and ${open} open but n_scopes is ${nScopes} ` +
      `and n_open ${nOpen}`);
  }
  off = Math.ceil(off / 8) * 8;

  const scopeStart = copyArray(Float64Array, bytes, off, nAll, dv);
  off += nAll * 8;
  const scopeDuration = copyArray(Float64Array, bytes, off, nAll, dv);
  off += nAll * 8;
  const scopeSite = copyArray(Uint32Array, bytes, off, nAll, dv);
  off += nAll * 4;
  const scopeDepth = copyArray(Uint32Array, bytes, off, nAll, dv);
  off += nAll * 4;
  const scopeParent = copyArray(Uint32Array, bytes, off, nAll, dv);
  off += nAll * 4;
  const scopeFlags = copyArray(Uint32Array, bytes, off, nAll, dv);

  for (let i = 0; i < nAll; i++) {
    const s = scopeStart[i];
    const d = scopeDuration[i];
    if (!Number.isFinite(s)) throw new FrameViewError(`scope ${i}: start_ns ${s} is not finite`);
    if (!(d >= 0) || d === Infinity) {
      throw new FrameViewError(`scope ${i}: duration_ns ${d} is not a finite non-negative number`);
    }
  }
  // Parents: from an index among the thread's scopes to an index in these arrays.
  for (let t = 0; t < nThreads; t++) {
    const first = threadFirst[t], count = threadScopeCounts[t] + threadOpenCounts[t];
    for (let i = first; i < first + count; i++) {
      const p = scopeParent[i];
      if (p === PARENT_NONE || p === PARENT_UNKNOWN) continue;
      if (p >= count) {
        throw new FrameViewError(`scope ${i}: parent ${p} is outside its thread's ${count} scopes`);
      }
      scopeParent[i] = first + p;
    }
  }

  return {
    version, flags, hasScopes, byteLength: totalBytes,
    frameIndex, startNs, durationNs, overheadNs, droppedScopes,
    columnIds, values,
    nDrops, dropCause, dropThread, dropCount,
    threadIds, threadScopeCounts, threadOpenCounts, threadFirst,
    nScopes, nOpen, scopeStart, scopeDuration, scopeSite, scopeDepth, scopeParent, scopeFlags,
  };
}
