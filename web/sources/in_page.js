// @ts-check
// In-page source: the live link between a wasm app on the same page and the panel.
//
// The wasm glue (wasm/) calls these two functions; nothing here polls or owns a timer:
//   const source = createInPageSource(panel);
//   source.pushDeclarations(jsonTextOrObject)  // whenever new columns/sites/threads appear,
//                                              // always before the first frame that uses them
//   source.pushFrame(u8)                       // once per frame: a frame view (see frame_view.js)
// pushFrame copies what it keeps before returning, so `u8` may be a view into wasm memory that the
// next frame overwrites (e.g. HEAPU8.subarray(ptr, ptr + len)). Neither function throws into the
// caller: bad input is counted and reported in the panel (a profiler must not break the app).

/**
 * panel: the object mountPanel returns (or any sink with pushDeclarations, pushFrame, setStatus).
 * Returns { pushDeclarations(json) -> bool, pushFrame(u8) -> bool, reset(), stats() }.
 * @param {import('./decoder.js').CaptureSink} panel @param {{label?: string}} [options]
 */
export function createInPageSource(panel, { label = 'live: in-page' } = {}) {
  let frames = 0;
  let rejected = 0;
  let declarationErrors = 0;
  let announced = false;
  const announce = () => {
    if (!announced) { announced = true; panel.setStatus?.(label, 'live'); }
  };
  return {
    /** @param {object | string} json */
    pushDeclarations(json) {
      try {
        panel.pushDeclarations(json);
        announce();
        return true;
      } catch (err) {
        declarationErrors++;
        panel.setStatus?.(`bad declarations from the app: ${err.message}`, 'error');
        return false;
      }
    },
    /** @param {Uint8Array} u8 */
    pushFrame(u8) {
      announce();
      const ok = panel.pushFrame(u8);
      if (ok) frames++; else rejected++;
      return ok;
    },
    /** Forget everything shown so far (the app restarted its session). */
    reset() {
      frames = 0; rejected = 0; declarationErrors = 0;
      panel.clear?.();
    },
    stats: () => ({ frames, rejected, declarationErrors }),
  };
}
