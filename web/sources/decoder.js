// @ts-check
// The capture decoder interface and how the page finds one.
//
// .vor bytes are decoded by the project's C reader compiled to wasm (the panel never parses .vor
// itself). That build provides an ES module served next to index.html, `capture_decoder.js`, exporting
//   createCaptureDecoder(): CaptureDecoder | Promise<CaptureDecoder>
// where a CaptureDecoder is
//   push(Uint8Array bytes) -> { declarations: [object|string...], frames: [Uint8Array...], error?: string }
//       bytes are the next consecutive bytes of one .vor file, cut anywhere (a websocket message, a
//       file chunk); it returns what became complete: declarations (in order, each before the frames
//       that use it) and frame views. `error` means the stream is unreadable from here on.
//   reset()   forget all state: the next push starts a new file.
//   finished() -> bool (optional)  true once the capture's end record was read. The file source uses
//       it to tell a complete file from a truncated one (or one still being written); without it a
//       file that stops early cannot be told apart.
// The module may also export createCaptureIndex() (wasm/site/capture_decoder.js): random access to
// a file opened on the page (sources/file_access.js). loadCaptureDecoder hands back both factories
// (`create`, `createIndex`), so a capture session can make the decoders it needs.
// Where the page has no such module (a native-only build, or a page served without it),
// loadCaptureDecoder reports why there is no decoder; nothing is faked.

/**
 * @typedef {object} DecodeResult
 * @property {(object | string)[]} [declarations]
 * @property {Uint8Array[]} [frames]
 * @property {string} [error]
 */
/**
 * @typedef {object} CaptureDecoder
 * @property {(bytes: Uint8Array) => DecodeResult | null} push
 * @property {() => void} reset
 * @property {() => boolean} [finished]
 */
/**
 * Where decoded declarations and frame views go (the panel, or a test's stand-in).
 * @typedef {object} CaptureSink
 * @property {(json: object | string) => void} pushDeclarations
 * @property {(bytes: Uint8Array) => boolean} pushFrame
 * @property {() => void} [clear]
 * @property {(text: string, kind: string) => void} [setStatus]
 */

export const DECODER_MODULE = 'capture_decoder.js';

/**
 * Is `d` usable as a CaptureDecoder?
 * @param {any} d
 * @returns {d is CaptureDecoder}
 */
export function isCaptureDecoder(d) {
  return !!d && typeof d.push === 'function' && typeof d.reset === 'function';
}

/**
 * Loads the decoder module at `url` (default: capture_decoder.js beside the page).
 * Resolves to {decoder} or {decoder: null, reason} with a sentence for the user.
 * @param {string} [url] @param {typeof fetch} [fetchImpl]
 * @returns {Promise<{decoder: CaptureDecoder, reason?: undefined, create: () => Promise<CaptureDecoder>,
 *   createIndex: (() => Promise<import('./file_access.js').WasmCaptureIndex>) | null} | {decoder: null, reason: string, create?: undefined, createIndex?: undefined}>}
 */
export async function loadCaptureDecoder(url = new URL(DECODER_MODULE, globalThis.location?.href ?? 'http://localhost/').href, fetchImpl = globalThis.fetch) {
  try {
    // GET, not HEAD: not every static server answers HEAD (the module is small; import() reuses it)
    const probe = await fetchImpl(url, { cache: 'no-cache' });
    if (!probe.ok) {
      return { decoder: null, reason: `No capture decoder: ${DECODER_MODULE} is not served here (HTTP ${probe.status}). It is built by the WebAssembly flavour of vor (the C .vor reader compiled to wasm).` };
    }
  } catch (err) {
    return { decoder: null, reason: `No capture decoder: ${DECODER_MODULE} could not be fetched (${err.message}).` };
  }
  try {
    const mod = await import(/* @vite-ignore */ url);
    const factory = mod.createCaptureDecoder ?? mod.default?.createCaptureDecoder;
    if (typeof factory !== 'function') {
      return { decoder: null, reason: `${DECODER_MODULE} does not export createCaptureDecoder().` };
    }
    const decoder = await factory();
    if (!isCaptureDecoder(decoder)) {
      return { decoder: null, reason: `${DECODER_MODULE}: createCaptureDecoder() did not return an object with push() and reset().` };
    }
    const createIndex = mod.createCaptureIndex ?? mod.default?.createCaptureIndex;
    return { decoder, create: async () => factory(), createIndex: typeof createIndex === 'function' ? async () => createIndex() : null };
  } catch (err) {
    return { decoder: null, reason: `${DECODER_MODULE} failed to load: ${err.message}` };
  }
}

/**
 * Feeds bytes to a decoder and hands what it returns to the sink (declarations first, then frames).
 * Returns {frames, declarations, rejected, error}. Never throws (a throwing decoder is an error result).
 * @param {CaptureDecoder} decoder @param {Uint8Array} bytes @param {CaptureSink} sink
 * @returns {{frames: number, declarations: number, rejected: number, error: string | null}}
 */
export function feedDecoder(decoder, bytes, sink) {
  let result;
  try {
    result = decoder.push(bytes);
  } catch (err) {
    return { frames: 0, declarations: 0, rejected: 0, error: `decoder failed: ${err.message}` };
  }
  /** @type {{frames: number, declarations: number, rejected: number, error: string | null}} */
  const out = { frames: 0, declarations: 0, rejected: 0, error: result && result.error ? String(result.error) : null };
  if (!result) return out;
  for (const d of result.declarations ?? []) {
    try { sink.pushDeclarations(d); out.declarations++; } catch (err) { out.error ??= `bad declarations: ${err.message}`; }
  }
  for (const f of result.frames ?? []) {
    if (sink.pushFrame(f) === false) out.rejected++; else out.frames++;
  }
  return out;
}
