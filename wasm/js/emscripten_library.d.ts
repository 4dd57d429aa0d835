// Types for checking the Emscripten JS libraries of this folder (wasm/js/tsconfig.json): what
// Emscripten 3.1.6 provides to a --js-library file (mergeInto, the module object, the heap views,
// the string helpers), the globals each library's `$Name` object becomes in the output, and the
// extended console.timeStamp of Chromium's DevTools. Declarations only: nothing here is emitted or
// linked, and emcc never sees this file (the libraries are the *.js files).

// ---- Emscripten 3.1.6, library scope
declare const LibraryManager: { library: Record<string, unknown> };
declare function mergeInto(target: Record<string, unknown>, source: Record<string, unknown>): void;
/** The module object: the page's settings in, the glue's API out (keys quoted, as Closure wants). */
declare var Module: Record<string, any>;
declare var HEAP32: Int32Array;
declare var HEAPU32: Uint32Array;
declare var HEAPU8: Uint8Array;
declare var HEAPF64: Float64Array;
declare var wasmTable: WebAssembly.Table;
/** The compiled module; defined in pthreads builds only. */
declare var wasmModule: WebAssembly.Module | undefined;
declare function UTF8ToString(ptr: number, maxBytesToRead?: number): string;
declare function stringToUTF8(str: string, outPtr: number, maxBytesToWrite: number): number;

// ---- browser globals the DOM library does not describe
/** Defined in workers only. */
declare var WorkerGlobalScope: (new () => object) | undefined;
interface Console {
  /** Chromium's extended form: an entry on a custom DevTools track (data: shown as the entry's data). */
  timeStamp(name: string, start: number, end: number, track?: string, trackGroup?: string, color?: string, data?: string): void;
}

// ---- panel_bridge.js
interface VorPanelBridgeLib {
  /** Calls Module.vorPanelSource[method](arg): 0 taken, 1 threw (message written), 2 no source. */
  call(method: 'pushDeclarations' | 'pushFrame', arg: string | Uint8Array, errorPtr: number, errorCapacity: number): number;
}
declare var VorPanelBridge: VorPanelBridgeLib;

// ---- function_names.js
interface VorFunctionNamesLib {
  /** Function index -> name, once the module is known (empty without a name section). */
  names: Map<number, string> | null;
  module(): WebAssembly.Module | null;
  parse(module: WebAssembly.Module): Map<number, string>;
  name(pointer: number): string;
}
declare var VorFunctionNames: VorFunctionNamesLib;

// ---- devtools.js: the library object, plus the state its init() and reset() create
interface VorDevtoolsSite {
  name: string;
  measureName: string;
  location: string;
  color: string;
  frameProp: [string, string];
  detail: { devtools: VorDevtoolsDetail };
  stamp: number;
}
interface VorDevtoolsDetail {
  dataType: 'track-entry';
  track: string;
  trackGroup?: string;
  color: string;
  properties: [string, string][];
  tooltipText: string;
}
interface VorDevtoolsRequest { mode: number; minNs: number | null; group: string | null; budget: number | null }
interface VorDevtoolsState {
  defaultMode: number;
  /** Address of page_settings_t once C handed it over (0 before). */
  shared: number;
  early: VorDevtoolsRequest;
  frameMark: string;
  opts: { start: number; end: number; detail: { devtools: VorDevtoolsDetail } | null };
  used: string[];
  trackOfIndex: string[];
  serial: number;
  warnedClock: boolean;
  sites: (VorDevtoolsSite | undefined)[];
  columns: ({ name: string; unit: string } | undefined)[];
  group: string;
  groupArg: string | undefined;
  threads: Map<number, string>;
  trackOwner: Map<string, number>;
}
declare var VorDevtools: typeof LibraryVorDevtools.$VorDevtools & VorDevtoolsState;

// ---- upload.js: the Emscripten 3.1.6 runtime helpers it uses, the C function it calls, its state
declare function lengthBytesUTF8(str: string): number;
declare function stackSave(): number;
declare function stackRestore(sp: number): void;
declare function allocateUTF8OnStack(str: string): number;
/** wasm/src/upload_wasm.c (EMSCRIPTEN_KEEPALIVE): 1 started, 0 refused (reported). */
declare function _vor_upload_start_js(url: number, project: number, tags: number, token: number, name: number,
  flame: number, every: number, maxFrames: number): number;
interface VorUploadChunk { start: number; bytes: Uint8Array }
interface VorUploadState {
  url: string; hello: string; header: Uint8Array; chunks: VorUploadChunk[]; kept: number; budget: number;
  head: number; sent: number; acked: number; ws: WebSocket | null; ready: boolean; failed: boolean; done: boolean;
  ending: boolean; finishSent: boolean; backoff: number; reconnects: number; warned: boolean;
}
interface VorUploadOptions {
  project?: string; tags?: Record<string, string>; token?: string; name?: string; flame?: boolean; every?: number;
  maxFrames?: number;
}
declare var VorUpload: typeof LibraryVorUpload.$VorUpload & { s: VorUploadState | null };
