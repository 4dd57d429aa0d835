// capture_decoder.js: the panel's capture decoder (web/sources/decoder.js loads it from
// beside index.html). It wraps the vor_decoder wasm module, i.e. the C reader compiled to
// wasm, so the browser decodes .vor bytes with exactly the code that reads them natively.
//
//   const decoder = await createCaptureDecoder();
//   const { declarations, frames, error } = decoder.push(bytes);   // bytes: the next part of a .vor file
//   decoder.reset();                                               // a new file
//   const { count, reports } = decoder.damage();                   // damaged records skipped so far
//
// push() takes bytes cut anywhere and returns what they completed: declarations (JSON text,
// to apply before the frames) and frame views (Uint8Array copies, docs/FORMAT.md). `error`
// means the stream cannot be read from that point on. A damaged record is not an error: the
// reader skips it and reads on (docs/FORMAT.md section 3.2); damage() says how many were skipped
// and describes each ("damaged record at byte N (M bytes skipped): problem", the first 64).
//
//   const index = await createCaptureIndex();   // random access to a file opened on the page
//   index.push(bytes);                          // the file, in order, in chunks (kept: entries only)
//   const e = index.entries(from);              // {count, stride, first, offset, index, start, min, max, sum, frames, flame}
//   const src = index.stateSource(k);           // {from, snapshot}: the file's bytes [from, offset[k]) ...
//   const state = index.state(k, src.snapshot, bytes);  // ... give the state record of entry k
//   header() + state + the file's bytes from offset[k] is a stream the decoder reads (FORMAT.md 4.8).
import createVorDecoder from './vor_decoder.mjs';

// `moduleOptions` go to the Emscripten module (e.g. { wasmBinary } where fetch is not
// the way to load it, as in node tests).
export async function createCaptureDecoder(moduleOptions = {}) {
  const m = await createVorDecoder(moduleOptions);
  let handle = m._vor_wasm_decoder_new();
  if (!handle) throw new Error('capture decoder: out of memory');
  const chunkCapacity = m._vor_wasm_decoder_chunk_capacity();
  let failed = '';

  function push(bytes) {
    const declarations = [];
    const frames = [];
    if (failed) return { declarations, frames, error: failed };
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    for (let offset = 0; offset < data.length; offset += chunkCapacity) {
      const chunk = data.subarray(offset, Math.min(data.length, offset + chunkCapacity));
      m.HEAPU8.set(chunk, m._vor_wasm_decoder_input(handle));
      const n = m._vor_wasm_decoder_push(handle, chunk.length);
      for (let i = 0; i < n; i++) {
        const json = m._vor_wasm_decoder_declarations(handle, i);
        if (json) declarations.push(m.UTF8ToString(json));
        const view = m._vor_wasm_decoder_view(handle, i);
        const size = m._vor_wasm_decoder_view_size(handle, i);
        frames.push(m.HEAPU8.slice(view, view + size)); // memory may grow: read HEAPU8 now
      }
      const error = m.UTF8ToString(m._vor_wasm_decoder_error(handle));
      if (error) {
        failed = error;
        return { declarations, frames, error };
      }
    }
    return { declarations, frames };
  }

  function reset() {
    m._vor_wasm_decoder_reset(handle);
    failed = '';
  }

  function finished() {
    return m._vor_wasm_decoder_finished(handle) === 1;
  }

  function damage() {
    const count = m._vor_wasm_decoder_damage_count(handle);
    const reports = [];
    for (let i = 0; i < Math.min(count, 64); i++) reports.push(m.UTF8ToString(m._vor_wasm_decoder_damage(handle, i)));
    return { count, reports };
  }

  return { push, reset, finished, damage };
}

// 64-bit integers of the index's arrays as doubles (exact below 2^53).
function u64Array(m, ptr, n, signed) {
  const out = new Float64Array(n);
  const w = m.HEAPU32, base = ptr >>> 2;
  for (let i = 0; i < n; i++) {
    const lo = w[base + 2 * i], hi = w[base + 2 * i + 1];
    out[i] = signed && hi & 0x80000000 ? -((~hi >>> 0) * 4294967296 + ((~lo >>> 0) + 1)) : hi * 4294967296 + lo;
  }
  return out;
}

export async function createCaptureIndex(moduleOptions = {}) {
  const m = await createVorDecoder(moduleOptions);
  const handle = m._vor_wasm_index_new(0);
  if (!handle) throw new Error('capture index: out of memory');
  const chunkCapacity = m._vor_wasm_index_chunk_capacity();
  let failed = '';

  function push(bytes) {
    if (failed) return { frames: 0, error: failed };
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    let frames = 0;
    for (let offset = 0; offset < data.length; offset += chunkCapacity) {
      const chunk = data.subarray(offset, Math.min(data.length, offset + chunkCapacity));
      m.HEAPU8.set(chunk, m._vor_wasm_index_input(handle));
      const n = m._vor_wasm_index_push(handle, chunk.length);
      if (n < 0) {
        failed = m.UTF8ToString(m._vor_wasm_index_error(handle)) || 'capture index failed';
        return { frames, error: failed };
      }
      frames += n;
    }
    return { frames };
  }

  function entries(from = 0) {
    const count = m._vor_wasm_index_count(handle);
    const first = Math.min(from, count), n = count - first;
    const arr = (k) => m._vor_wasm_index_array(handle, k);
    const f32 = (k) => m.HEAPF32.slice((arr(k) >>> 2) + first, (arr(k) >>> 2) + first + n);
    const u32 = (k) => m.HEAPU32.slice((arr(k) >>> 2) + first, (arr(k) >>> 2) + first + n);
    return {
      count, first, stride: m._vor_wasm_index_stride(handle),
      offset: u64Array(m, arr(0) + 8 * first, n, false), index: u64Array(m, arr(1) + 8 * first, n, false),
      start: u64Array(m, arr(2) + 8 * first, n, true), min: f32(3), max: f32(4), sum: f32(5), frames: u32(6), flame: u32(7),
    };
  }

  function flags() {
    const f = m._vor_wasm_index_flags(handle);
    return { finished: !!(f & 1), randomAccess: !!(f & 2), header: !!(f & 4), frames: m._vor_wasm_index_frames(handle), bytes: m._vor_wasm_index_offset(handle) };
  }

  function header() {
    const p = m._vor_wasm_index_header(handle);
    return p ? m.HEAPU8.slice(p, p + m._vor_wasm_index_header_size(handle)) : null;
  }

  function stateSource(e) {
    const snap = m._malloc(4);
    const from = m._vor_wasm_index_state_source(handle, e, snap);
    const snapshot = m.HEAPU32[snap >>> 2];
    m._free(snap);
    return from < 0 ? null : { from, snapshot };
  }

  function state(e, snapshot, bytes) {
    const buf = m._malloc(Math.max(1, bytes.length));
    const sizeOut = m._malloc(4);
    try {
      if (!buf || !sizeOut) return null;
      m.HEAPU8.set(bytes, buf);
      const p = m._vor_wasm_index_state(handle, e, snapshot, buf, bytes.length, sizeOut);
      return p ? m.HEAPU8.slice(p, p + m.HEAPU32[sizeOut >>> 2]) : null;
    } finally {
      m._free(buf);
      m._free(sizeOut);
    }
  }

  function declarations() {
    const sizeOut = m._malloc(4);
    try {
      const p = m._vor_wasm_index_declarations(handle, sizeOut);
      return p ? m.HEAPU8.slice(p, p + m.HEAPU32[sizeOut >>> 2]) : null;
    } finally {
      m._free(sizeOut);
    }
  }

  // The intact records in `bytes` (a piece of a 1.1 capture cut anywhere): [start, end), or null.
  function findRecords(bytes) {
    const buf = m._malloc(Math.max(1, bytes.length));
    const endOut = m._malloc(4);
    try {
      m.HEAPU8.set(bytes, buf);
      const start = m._vor_wasm_find_records(buf, bytes.length, endOut);
      return start < 0 ? null : { start, end: m.HEAPU32[endOut >>> 2] };
    } finally {
      m._free(buf);
      m._free(endOut);
    }
  }

  return { push, entries, flags, header, stateSource, state, declarations, findRecords, free: () => m._vor_wasm_index_free(handle) };
}
