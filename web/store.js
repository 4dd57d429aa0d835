// @ts-check
// Bounded frame history: the declarations seen so far and a ring of parsed frames.
//
// Frames get consecutive sequence numbers (seq) in arrival order; the ring keeps the last `capacity`
// of them (default 10,000, at most 100,000). Per-frame numbers live in columnar typed arrays indexed by
// seq % capacity, so the bars and plots read a contiguous (or two-piece) run of doubles: about (5 * 8 + 5)
// bytes per frame, allocated at construction, plus (8 + 1) bytes per frame for each metric column that
// is plotted, allocated on the column's first value. At most MAX_PLOT_COLUMNS (64) metric columns are
// plotted (system columns first, then declaration order; frame_ms is the bars): the values of the others
// are not kept, and the panel says how many there are. So the ring holds at most about
// (45 + 9 * 64) bytes per frame, e.g. 10,000 frames x 10 columns = 1.3 MB, 100,000 frames x 64 columns =
// 62 MB, however many columns a capture declares (the reader accepts 4,096).
//
// Scopes are the heavy part (32 bytes each: start, duration, site, depth, parent, flags). They are bounded
// separately by a scope budget (default 2,000,000 scopes, about 64 MB; at most 20,000,000): when a new frame would
// exceed it, the scopes of the oldest frames are released first (their metrics stay; the flame chart
// says the scopes were evicted). A single frame larger than the whole budget keeps no scopes.

import { parseFrameView } from './frame_view.js';

// Scopes a kept view holds in its arrays: the ended ones and those still open at its end.
const heldScopes = (/** @type {FrameView} */ view) => view.nScopes + (view.nOpen ?? 0);

export const DEFAULT_HISTORY_FRAMES = 10000;
export const MAX_HISTORY_FRAMES = 100000;
export const DEFAULT_SCOPE_BUDGET = 2000000;
export const MAX_SCOPE_BUDGET = 20000000;
export const MAX_PLOT_COLUMNS = 64;
// How many declarations are kept: what vor can produce, with room (columns: 32 system + 4,096
// user; sites: VOR_MAX_SITES; threads: 1,024 at once, ids grow with churn). Beyond, new ids are
// ignored and counted (names fall back to "site N"), so a hostile or broken source cannot grow them.
export const MAX_DECLARED = { columns: 8192, sites: 131072, threads: 65536 };

/** @typedef {ReturnType<typeof parseFrameView>} FrameView */
/**
 * @typedef {object} Column
 * @property {number} id
 * @property {string} name
 * @property {string} unit
 * @property {boolean} system
 * @property {number} order            declaration order
 * @property {boolean} [undeclared]    seen in a frame, never declared
 */
/** @typedef {{id: number, name: string, function: string, file: string, line: number, module: number}} Site */
/** @typedef {{scopeNs: number, functionNs: number}} Costs */
/** @typedef {{id: number, name: string, order: number}} Thread */
/** @typedef {{resolutionNs: number, source: string, crossOriginIsolated: boolean | null}} Clock */
/** @typedef {Float64Array | Uint32Array | Uint8Array} RingArray */

export const SCOPES_NONE = 0; // metrics-only frame
export const SCOPES_PRESENT = 1;
export const SCOPES_EVICTED = 2; // released to stay within the scope budget

/** Declared columns, sites, threads and clock, merged from every declarations object received. */
export class Declarations {
  /** @type {Map<number, Column>} */ columns;
  /** @type {Map<number, Site>} */ sites;
  /** @type {Map<number, Thread>} */ threads;
  /** @type {number} */ frameMsColumn;
  /** @type {Clock | null} */ clock;
  /** @type {Costs | null} */ costs;
  /** @type {number} */ ignored;
  version = -1; // the first clear() makes it 0

  constructor() { this.clear(); }

  clear() {
    this.columns = new Map(); // id -> {id, name, unit, system, order, undeclared?}
    this.sites = new Map(); // id -> {id, name, function, file, line}
    this.threads = new Map(); // id -> {id, name, order}
    this.frameMsColumn = -1;
    this.clock = null; // {resolutionNs, source, crossOriginIsolated (true, false or null)} once declared
    this.costs = null; // the capture's calibrated cost of one scope / one function hook (ns), once declared
    this.ignored = 0; // declarations past MAX_DECLARED
    this.version++; // never goes back: caches keyed on it stay correct across a clear
  }

  /**
   * Merges one declarations object (or its JSON text). Unknown keys are ignored; a later declaration
   * of an id replaces the earlier one (a thread may be renamed). Throws on text that is not JSON.
   * @param {string | object} json
   */
  apply(json) {
    const d = typeof json === 'string' ? JSON.parse(json) : json;
    if (d === null || typeof d !== 'object') throw new Error('declarations: expected an object');
    for (const c of Array.isArray(d.columns) ? d.columns : []) {
      const id = c.id >>> 0;
      const prev = this.columns.get(id);
      if (!prev && this.columns.size >= MAX_DECLARED.columns) { this.ignored++; continue; }
      this.columns.set(id, {
        id, name: String(c.name ?? `column ${id}`), unit: String(c.unit ?? ''),
        system: !!c.system, order: prev ? prev.order : this.columns.size,
      });
      if (c.name === 'frame_ms') this.frameMsColumn = id;
    }
    for (const s of Array.isArray(d.sites) ? d.sites : []) {
      const id = s.id >>> 0;
      if (!this.sites.has(id) && this.sites.size >= MAX_DECLARED.sites) { this.ignored++; continue; }
      this.sites.set(id, {
        id, name: String(s.name ?? s.function ?? `site ${id}`), function: String(s.function ?? ''),
        file: String(s.file ?? ''), line: s.line >>> 0, module: s.module >>> 0,
      });
    }
    for (const t of Array.isArray(d.threads) ? d.threads : []) {
      const id = t.id >>> 0;
      const prev = this.threads.get(id);
      if (!prev && this.threads.size >= MAX_DECLARED.threads) { this.ignored++; continue; }
      this.threads.set(id, { id, name: String(t.name ?? `thread ${id}`), order: prev ? prev.order : this.threads.size });
    }
    // The clock scopes were timed with: a positive step in ns, else ignored.
    const clock = d.clock;
    if (clock && typeof clock === 'object' && Number(clock.resolution_ns) > 0 && Number.isFinite(Number(clock.resolution_ns))) {
      this.clock = {
        resolutionNs: Number(clock.resolution_ns), source: String(clock.source ?? ''),
        crossOriginIsolated: typeof clock.cross_origin_isolated === 'boolean' ? clock.cross_origin_isolated : null,
      };
    }
    // The calibrated costs (ns) scope tables compensate for (scope_table.js); non-positive = unknown.
    const costs = d.costs;
    if (costs && typeof costs === 'object') {
      const pos = (/** @type {unknown} */ v) => (Number(v) > 0 && Number.isFinite(Number(v)) ? Number(v) : 0);
      const c = { scopeNs: pos(costs.scope_ns), functionNs: pos(costs.function_ns) };
      if (c.scopeNs > 0 || c.functionNs > 0) this.costs = c;
    }
    this.version++;
  }

  /**
   * A column seen in a frame before (or without) its declaration gets a placeholder.
   * @param {number} id
   * @returns {Column | null}  null past MAX_DECLARED
   */
  ensureColumn(id) {
    let c = this.columns.get(id);
    if (!c) {
      if (this.columns.size >= MAX_DECLARED.columns) { this.ignored++; return null; }
      c = { id, name: `column ${id}`, unit: '', system: false, order: this.columns.size, undeclared: true };
      this.columns.set(id, c);
      this.version++;
    }
    return c;
  }

  /** @param {number} id */
  siteName(id) { const s = this.sites.get(id); return s ? s.name : `site ${id}`; }
  /** @param {number} id */
  threadName(id) { const t = this.threads.get(id); return t ? t.name : `thread ${id}`; }

  /** Metric columns to plot, system first, then in declaration order; frame_ms is the bars, not a plot. */
  plotColumns() {
    return [...this.columns.values()]
      .filter((c) => c.id !== this.frameMsColumn)
      .sort((a, b) => (a.system === b.system ? a.order - b.order : a.system ? -1 : 1));
  }
}

export class FrameStore {
  // set by reset()
  /** @type {number} */ end;
  /** @type {number} */ first;
  /** @type {number} */ totalScopes;
  /** @type {number} */ evictCursor;
  /** @type {number} */ lastScopeSeq;
  /** @type {number} */ version;
  /** @type {number} */ scopeVersion;

  /** @param {{capacity?: number, scopeBudget?: number, maxColumns?: number}} [options] */
  constructor({ capacity = DEFAULT_HISTORY_FRAMES, scopeBudget = DEFAULT_SCOPE_BUDGET, maxColumns = MAX_PLOT_COLUMNS } = {}) {
    if (!(capacity >= 1 && capacity <= MAX_HISTORY_FRAMES)) {
      throw new RangeError(`history capacity ${capacity} outside 1..${MAX_HISTORY_FRAMES} frames`);
    }
    if (!(scopeBudget >= 0 && scopeBudget <= MAX_SCOPE_BUDGET)) {
      throw new RangeError(`scope budget ${scopeBudget} outside 0..${MAX_SCOPE_BUDGET} scopes`);
    }
    if (!(maxColumns >= 0 && maxColumns <= MAX_PLOT_COLUMNS)) {
      throw new RangeError(`plotted columns ${maxColumns} outside 0..${MAX_PLOT_COLUMNS}`);
    }
    this.capacity = capacity | 0;
    this.scopeBudget = scopeBudget;
    this.maxColumns = maxColumns | 0;
    /** @type {Column[]} */
    this.plotted = []; // the columns that get a plot and keep their values (see plotColumns())
    /** @type {Set<number>} */
    this.plottedIds = new Set();
    this.hidden = 0;
    this.plottedVersion = -1; // decls.version they were computed for
    this.decls = new Declarations();
    this.frameIndex = new Float64Array(capacity);
    this.startNs = new Float64Array(capacity);
    this.durationNs = new Float64Array(capacity);
    this.overheadNs = new Float64Array(capacity);
    this.frameMsArr = new Float64Array(capacity);
    this.scopeCount = new Uint32Array(capacity);
    this.droppedScopes = new Uint32Array(capacity);
    this.scopeState = new Uint8Array(capacity);
    /** @type {(FrameView | null)[]} */
    this.scopeViews = new Array(capacity).fill(null);
    /** @type {Map<number, {values: Float64Array, present: Uint8Array}>} */
    this.columnData = new Map(); // column id -> its values and which are present
    /** @type {Record<string, RingArray>} */
    this.scratch = { values: new Float64Array(0), present: new Uint8Array(0) };
    /** Earliest frame start seen since the last clear() (ns): the time axis's zero when no overview gives the capture's. */
    this.originNs = NaN;
    this.reset();
  }

  reset() {
    this.end = 0; // next seq
    this.first = 0; // oldest seq held
    this.totalScopes = 0;
    this.evictCursor = 0;
    this.lastScopeSeq = -1;
    this.version = 0; // bumps on every change (push, clear)
    this.scopeVersion = 0; // bumps when scopes are evicted or the ring is cleared
    this.scopeViews.fill(null);
    this.scopeState.fill(0);
    for (const c of this.columnData.values()) c.present.fill(0);
  }

  /** Drops all frames and declarations (a new capture). */
  clear() {
    this.decls.clear();
    this.columnData.clear();
    this.plottedVersion = -1;
    this.originNs = NaN;
    this.reset();
    this.scopeVersion++;
  }

  get size() { return this.end - this.first; }
  /** @param {number} seq */
  has(seq) { return seq >= this.first && seq < this.end; }
  /** @param {number} seq */
  slot(seq) { return seq % this.capacity; }

  /**
   * Parses and appends one frame view (bytes). Returns its seq. Throws FrameViewError on bad bytes.
   * @param {ArrayBuffer | ArrayBufferView} bytes
   */
  pushBytes(bytes) { return this.push(parseFrameView(bytes)); }

  /**
   * Appends one parsed frame view (see frame_view.js). Returns its seq.
   * @param {FrameView} view
   */
  push(view) {
    const seq = this.end;
    const s = seq % this.capacity;
    if (seq - this.first >= this.capacity) {
      this.releaseScopes(this.first);
      this.first++;
    }
    this.frameIndex[s] = view.frameIndex;
    this.startNs[s] = view.startNs;
    if (!(this.originNs <= view.startNs)) this.originNs = view.startNs;
    this.durationNs[s] = view.durationNs;
    this.overheadNs[s] = view.overheadNs;
    this.scopeCount[s] = view.nScopes;
    this.droppedScopes[s] = view.droppedScopes;
    const ids = view.columnIds;
    for (let i = 0; i < ids.length; i++) this.decls.ensureColumn(ids[i]);
    const plotted = this.plottedColumnIds(); // after the placeholders: they may change which are plotted
    for (const c of this.columnData.values()) c.present[s] = 0;
    let frameMs = NaN;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === this.decls.frameMsColumn) frameMs = view.values[i];
      if (!plotted.has(id)) continue; // not plotted: its values are not kept
      const col = this.column(id);
      col.values[s] = view.values[i];
      col.present[s] = 1;
    }
    this.frameMsArr[s] = Number.isFinite(frameMs) ? frameMs : view.durationNs / 1e6;
    this.end = seq + 1;

    this.scopeState[s] = SCOPES_NONE;
    this.scopeViews[s] = null;
    if (view.hasScopes) {
      const n = heldScopes(view);
      if (n > this.scopeBudget) {
        this.scopeState[s] = SCOPES_EVICTED;
        this.scopeVersion++;
      } else {
        while (this.totalScopes + n > this.scopeBudget && this.evictOldestScopes()) { /* loop */ }
        this.scopeViews[s] = view;
        this.scopeState[s] = SCOPES_PRESENT;
        this.totalScopes += n;
        this.lastScopeSeq = seq;
      }
    }
    this.version++;
    return seq;
  }

  /**
   * The metric columns that get a plot, in plot order: the first maxColumns of decls.plotColumns().
   * Only these keep values; recomputed when the declarations change (cached otherwise).
   */
  plotColumns() {
    this.plottedColumnIds();
    return this.plotted;
  }

  /** How many metric columns are declared or seen beyond the plotted ones (not plotted, values not kept). */
  hiddenColumns() {
    this.plottedColumnIds();
    return this.hidden;
  }

  plottedColumnIds() {
    if (this.plottedVersion === this.decls.version) return this.plottedIds;
    const all = this.decls.plotColumns();
    this.plotted = all.length > this.maxColumns ? all.slice(0, this.maxColumns) : all;
    this.hidden = all.length - this.plotted.length;
    this.plottedIds = new Set(this.plotted.map((c) => c.id));
    // a column that is no longer plotted (frame_ms declared after its values came, a system column
    // declared late) gives its arrays back
    for (const id of [...this.columnData.keys()]) if (!this.plottedIds.has(id)) this.columnData.delete(id);
    this.plottedVersion = this.decls.version;
    return this.plottedIds;
  }

  /** Bytes held by the frame ring (its arrays, the columns' arrays, the series scratch); scopes are bounded by the scope budget instead. */
  ringBytes() {
    let n = this.scopeViews.length * 8; // references
    for (const a of [this.frameIndex, this.startNs, this.durationNs, this.overheadNs, this.frameMsArr, this.scopeCount, this.droppedScopes, this.scopeState]) n += a.byteLength;
    for (const c of this.columnData.values()) n += c.values.byteLength + c.present.byteLength;
    for (const a of Object.values(this.scratch)) n += a.byteLength;
    return n;
  }

  /** @param {number} id */
  column(id) {
    let c = this.columnData.get(id);
    if (!c) {
      c = { values: new Float64Array(this.capacity), present: new Uint8Array(this.capacity) };
      this.columnData.set(id, c);
    }
    return c;
  }

  /** @param {number} seq */
  releaseScopes(seq) {
    const s = seq % this.capacity;
    if (this.scopeState[s] === SCOPES_PRESENT) {
      this.totalScopes -= heldScopes(/** @type {FrameView} */ (this.scopeViews[s]));
      this.scopeViews[s] = null;
      this.scopeState[s] = SCOPES_NONE;
      if (this.lastScopeSeq === seq) this.lastScopeSeq = -1;
    }
  }

  evictOldestScopes() {
    let q = Math.max(this.evictCursor, this.first);
    for (; q < this.end; q++) {
      const s = q % this.capacity;
      if (this.scopeState[s] === SCOPES_PRESENT) {
        this.totalScopes -= heldScopes(/** @type {FrameView} */ (this.scopeViews[s]));
        this.scopeViews[s] = null;
        this.scopeState[s] = SCOPES_EVICTED;
        if (this.lastScopeSeq === q) this.lastScopeSeq = -1;
        this.evictCursor = q + 1;
        this.scopeVersion++;
        return true;
      }
    }
    this.evictCursor = q;
    return false;
  }

  /** @param {number} seq */
  frameMs(seq) { return this.frameMsArr[seq % this.capacity]; }
  /** @param {number} seq */
  frameStart(seq) { return this.startNs[seq % this.capacity]; }
  /** @param {number} seq */
  frameDuration(seq) { return this.durationNs[seq % this.capacity]; }
  /** @param {number} seq */
  frameOverhead(seq) { return this.overheadNs[seq % this.capacity]; }
  /** @param {number} seq */
  frameIndexOf(seq) { return this.frameIndex[seq % this.capacity]; }
  /** @param {number} seq */
  scopes(seq) { return this.has(seq) ? this.scopeViews[seq % this.capacity] : null; }
  /** @param {number} seq */
  scopesState(seq) { return this.scopeState[seq % this.capacity]; }
  /** @param {number} id @param {number} seq */
  columnValue(id, seq) {
    const c = this.columnData.get(id);
    if (!c || !this.has(seq)) return undefined;
    const s = seq % this.capacity;
    return c.present[s] ? c.values[s] : undefined;
  }

  /**
   * Values of a ring array for frames [a, b) as a contiguous Float64Array: a subarray of the ring when
   * the run does not wrap, otherwise a copy into a reused scratch buffer (valid until the next call).
   * @template {RingArray} T
   * @param {T} ringArray @param {number} a @param {number} b @param {string} [scratchKey]
   * @returns {T}
   */
  series(ringArray, a, b, scratchKey = 'values') {
    const n = Math.max(0, b - a);
    const s0 = a % this.capacity;
    if (s0 + n <= this.capacity) return /** @type {T} */ (ringArray.subarray(s0, s0 + n));
    let buf = /** @type {T} */ (this.scratch[scratchKey]);
    if (!buf || buf.length < n || buf.constructor !== ringArray.constructor) {
      const Type = /** @type {new (n: number) => T} */ (ringArray.constructor);
      buf = new Type(Math.max(n, this.capacity));
      this.scratch[scratchKey] = buf;
    }
    const k = this.capacity - s0;
    buf.set(ringArray.subarray(s0), 0);
    buf.set(ringArray.subarray(0, n - k), k);
    return /** @type {T} */ (buf.subarray(0, n));
  }

  /** @param {number} a @param {number} b */
  frameMsSeries(a, b) { return this.series(this.frameMsArr, a, b, 'frameMs'); }
  /** @param {number} a @param {number} b */
  overheadSeries(a, b) { return this.series(this.overheadNs, a, b, 'overhead'); }
  /** @param {number} a @param {number} b */
  durationSeries(a, b) { return this.series(this.durationNs, a, b, 'duration'); }

  /** {values, present} of a column for frames [a, b) (views valid until the next call); null if unknown. */
  /** @param {number} id @param {number} a @param {number} b */
  columnSeries(id, a, b) {
    const c = this.columnData.get(id);
    if (!c) return null;
    return { values: this.series(c.values, a, b, 'values'), present: this.series(c.present, a, b, 'present') };
  }

  /** The frame with the largest frame time in [a, b), or -1. */
  /** @param {number} a @param {number} b */
  slowestIn(a, b) {
    a = Math.max(a, this.first); b = Math.min(b, this.end);
    let best = -1, bestMs = -Infinity;
    for (let q = a; q < b; q++) {
      const ms = this.frameMsArr[q % this.capacity];
      if (ms > bestMs) { bestMs = ms; best = q; }
    }
    return best;
  }
}
