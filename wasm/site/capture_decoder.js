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
