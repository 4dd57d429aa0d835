// @ts-check
// The panel's view model: what the user selected and how the view follows the stream. Pause (and
// the end of the frozen view), the pinned frame, the zoomed frame range, the flame chart's window
// (relative to its home) and vertical scroll, the frame budget, the overhead toggle, a shift-drag
// in progress and the pointer. Pure: no DOM, no canvas, no timers. Every action that changes the
// state calls `onChange` (the panel schedules a draw); the two reconciling steps the frame path
// runs before it draws (`reconcile`, `clampScroll`) change it silently.
//
// Units: frames are store sequence numbers (seq, store.js), flame times are ns, and the drag
// selection and the pointer are canvas CSS pixels (they become frames with the axis of the last
// draw, controller.js). `state` is a plain object so it can be read (scene.js), snapshotted and
// restored as a whole.

import { panWindow, zoomWindow } from './axis.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {[number, number]} Span */
/** @typedef {{x: number, y: number, clientX: number, clientY: number}} Pointer */
/**
 * @typedef {object} ViewState
 * @property {boolean} paused          the view is frozen (incoming frames are not shown)
 * @property {boolean} held            a gesture holds the axis (a shift-drag: frozen like paused until released)
 * @property {number} frozenEnd        store.end when the view was paused or held
 * @property {Span | null} range       zoomed frames [a, b) (seq), or null for all frames
 * @property {number} pinned           pinned frame (seq), -1 for none
 * @property {Span | null} flameRel    flame window relative to its home start (ns), null = home
 * @property {number} scrollY          flame lanes' vertical scroll (CSS px)
 * @property {number} budgetMs         frame budget
 * @property {boolean} showOverhead    draw the profiler's cost on the bars
 * @property {import('./bars_axis.js').BarsScaleMode} barsScale  the bars' y axis: fit to the data, from zero with the budget, or log
 * @property {Span | null} dragSel     shift-drag on the bars in progress (canvas x of its two ends)
 * @property {Pointer | null} pointer  where the pointer hovers (null: not over the canvas)
 * @property {string} search           scope name search ('' none): counted, highlighted (search.js)
 * @property {number} searchIndex      the match next/previous reached (-1: none yet)
 * @property {boolean} tableOpen       the scope table is shown (scope_table.js, render/scope_table.js)
 * @property {import('./scope_table.js').SortKey} sortKey   the table's sort column
 * @property {boolean} sortDesc        ... and direction
 * @property {string | null} selectedName  the scope whose callers and callees are shown (sandwich)
 * @property {boolean} compensate      subtract the profiler's calibrated costs (the CLI's default)
 * @property {Baseline | null} baseline    what the table compares against, or null
 */
/**
 * A scope table kept to compare against: a pinned frame, a range, or another capture.
 * @typedef {{label: string, table: import('./scope_table.js').ScopeTable}} Baseline
 */
/**
 * The flame chart's geometry from the last draw, which wheel and drag gestures act on.
 * @typedef {object} FlameWindow
 * @property {number} t0          window start (ns)
 * @property {number} t1          window end (ns)
 * @property {Span} home          what a reset shows; the window may not leave it entirely
 * @property {number} maxScroll   largest vertical scroll (CSS px)
 */

export const DEFAULT_BUDGET_MS = 16.7;
/** Narrowest flame window a wheel zoom reaches (ns). */
export const MIN_FLAME_SPAN_NS = 20;

export class ViewModel {
  /**
   * @param {FrameStore} store  the frames the selection refers to
   * @param {{budgetMs?: number, onChange?: () => void}} [options]
   */
  constructor(store, { budgetMs = DEFAULT_BUDGET_MS, onChange = () => {} } = {}) {
    this.store = store;
    this.onChange = onChange;
    /** @type {ViewState} */
    this.state = {
      paused: false, held: false, frozenEnd: 0, range: null, pinned: -1, flameRel: null, scrollY: 0,
      budgetMs, showOverhead: false, barsScale: 'fit', dragSel: null, pointer: null,
      search: '', searchIndex: -1, tableOpen: false, sortKey: 'total', sortDesc: true, selectedName: null,
      compensate: true, baseline: null,
    };
  }

  /** Paused, or a gesture holds the axis: frames that arrive are not shown (and none leave, panel.js). */
  frozen() { return this.state.paused || this.state.held; }

  /** The frames [a, b) in view: the zoomed range (within the history), the frozen view, or all. */
  viewRange() {
    const s = this.state, st = this.store;
    if (s.range) {
      const a = Math.max(s.range[0], st.first), b = Math.min(s.range[1], st.end);
      if (b > a) return /** @type {Span} */ ([a, b]);
    }
    if (this.frozen()) return /** @type {Span} */ ([st.first, Math.max(st.first, Math.min(s.frozenEnd, st.end))]);
    return /** @type {Span} */ ([st.first, st.end]);
  }

  /**
   * Before a draw: a range whose frames all left the history is dropped, and so is a pinned frame
   * no longer held. Silent (the draw that runs this shows the result). Returns whether it changed.
   */
  reconcile() {
    const s = this.state, st = this.store;
    let changed = false;
    if (s.range && !(Math.min(s.range[1], st.end) > Math.max(s.range[0], st.first))) { s.range = null; changed = true; }
    if (s.pinned >= 0 && !st.has(s.pinned)) { s.pinned = -1; changed = true; }
    return changed;
  }

  /**
   * Keeps the flame scroll within [0, maxScroll] (the lanes' height from the last layout). Silent.
   * @param {number} maxScroll
   */
  clampScroll(maxScroll) {
    this.state.scrollY = Math.max(0, Math.min(this.state.scrollY, maxScroll));
  }

  /**
   * Whether a newly stored frame changes the canvas: live, or a paused view that lost frames.
   * @param {number | null} lastAxisFirst  the first frame the last draw showed (null: none yet)
   */
  frameArrivalRedraws(lastAxisFirst) {
    return !this.frozen() || (lastAxisFirst !== null && this.store.first > lastAxisFirst);
  }

  pause() {
    const s = this.state;
    if (!s.paused) { if (!s.held) s.frozenEnd = this.store.end; s.paused = true; }
    this.onChange();
  }

  /** Follows the stream again: also drops the pin, the range, the flame window and a drag. */
  resume() {
    const s = this.state;
    s.paused = false; s.held = false; s.range = null; s.pinned = -1; s.flameRel = null; s.dragSel = null;
    this.onChange();
  }

  togglePause() {
    if (this.state.paused) this.resume(); else this.pause();
  }

  /**
   * Pins frame `seq` and pauses. Inside a zoomed range the flame chart frames that frame; otherwise
   * it shows the frame whole. Frames no longer held are ignored.
   * @param {number} seq
   */
  pinSeq(seq) {
    if (!this.store.has(seq)) return;
    this.pause();
    const s = this.state;
    if (seq !== s.pinned) { s.pinned = seq; s.flameRel = s.range ? this.pinnedRel(s.range, seq) : null; s.scrollY = 0; }
    this.onChange();
  }

  /**
   * Flame window of frame `seq` relative to the start of `range` (the flame home of a range).
   * @param {Span} range @param {number} seq
   * @returns {Span}
   */
  pinnedRel(range, seq) {
    const st = this.store;
    const base = st.frameStart(Math.max(range[0], st.first));
    const s = st.frameStart(seq) - base;
    return [s, s + Math.max(st.frameDuration(seq), 1)];
  }

  /**
   * Zooms every graph to frames [a, b) (clamped to the history), pins the slowest and pauses.
   * @param {number} a @param {number} b
   */
  zoomRange(a, b) {
    const st = this.store;
    a = Math.max(a, st.first); b = Math.min(b, st.end);
    if (b <= a) return;
    this.pause();
    const s = this.state;
    s.range = [a, b];
    s.pinned = st.slowestIn(a, b);
    s.flameRel = null;
    this.onChange();
  }

  /** Leaves the zoomed range (all frames again). */
  resetRange() {
    if (!this.state.range) return;
    this.state.range = null; this.state.flameRel = null;
    this.onChange();
  }

  /**
   * Pins the newest held frame whose frame_index is `index`; false when none is held.
   * @param {number} index
   */
  pinFrameIndex(index) {
    const st = this.store;
    for (let q = st.end - 1; q >= st.first; q--) if (st.frameIndexOf(q) === index) { this.pinSeq(q); return true; }
    return false;
  }

  /**
   * Zooms to the held frames whose frame_index is in [i0, i1].
   * @param {number} i0 @param {number} i1
   */
  zoomFrameIndexRange(i0, i1) {
    const st = this.store;
    let a = -1, b = -1;
    for (let q = st.first; q < st.end; q++) {
      const fi = st.frameIndexOf(q);
      if (fi >= i0 && a < 0) a = q;
      if (fi <= i1) b = q;
    }
    if (a >= 0 && b >= a) this.zoomRange(a, b + 1);
  }

  /** A shift-drag in progress between canvas x0 and x1, or none (null). @param {Span | null} sel */
  setDragSelection(sel) {
    const s = this.state;
    // the axis freezes when the drag starts, so the range committed is the one previewed
    if (sel && !s.held && !s.paused) { s.held = true; s.frozenEnd = this.store.end; }
    if (!sel) s.held = false;
    s.dragSel = sel;
    this.onChange();
  }

  /**
   * Moves the flame window by dtNs and the lanes by -dy pixels.
   * @param {FlameWindow} w @param {number} dtNs @param {number} dy
   */
  panFlame(w, dtNs, dy) {
    const [n0, n1] = panWindow(w.t0, w.t1, dtNs, w.home);
    const s = this.state;
    s.flameRel = [n0 - w.home[0], n1 - w.home[0]];
    s.scrollY = Math.max(0, Math.min(w.maxScroll, s.scrollY - dy));
    this.onChange();
  }

  /**
   * Zooms the flame window by `factor` (< 1 zooms in) keeping `anchorNs` in place.
   * @param {FlameWindow} w @param {number} anchorNs @param {number} factor
   */
  zoomFlame(w, anchorNs, factor) {
    const [n0, n1] = zoomWindow(w.t0, w.t1, anchorNs, factor, { minSpan: MIN_FLAME_SPAN_NS, bounds: w.home });
    this.state.flameRel = [n0 - w.home[0], n1 - w.home[0]];
    this.onChange();
  }

  /** The flame chart back to its home window, lanes scrolled to the top. */
  resetFlame() {
    this.state.flameRel = null; this.state.scrollY = 0;
    this.onChange();
  }

  /** @param {Pointer} p */
  setPointer(p) {
    this.state.pointer = p;
    this.onChange();
  }

  clearPointer() {
    if (!this.state.pointer) return;
    this.state.pointer = null;
    this.onChange();
  }

  /** @param {number} ms  a positive budget (the caller validates) */
  setBudget(ms) {
    this.state.budgetMs = ms;
    this.onChange();
  }

  /** @param {import('./bars_axis.js').BarsScaleMode} mode */
  setBarsScale(mode) {
    if (mode === this.state.barsScale) return;
    this.state.barsScale = mode;
    this.onChange();
  }

  toggleOverhead() {
    this.state.showOverhead = !this.state.showOverhead;
    this.onChange();
  }

  /** @param {string} q  the scope name search ('' clears it) */
  setSearch(q) {
    if (q === this.state.search) return;
    this.state.search = q; this.state.searchIndex = -1;
    this.onChange();
  }

  /**
   * Steps to the next (dir 1) or previous (-1) of `count` matches, wrapping; the flame window is set
   * around the match's span `win` (ns, absolute) when the flame geometry `w` is known.
   * @param {number} dir @param {number} count
   * @param {(i: number) => Span | null} windowOf  the window showing match i
   * @param {FlameWindow | null} w
   */
  searchStep(dir, count, windowOf, w) {
    if (count <= 0) return;
    const s = this.state;
    s.searchIndex = s.searchIndex < 0 ? (dir > 0 ? 0 : count - 1) : (((s.searchIndex + dir) % count) + count) % count;
    const win = windowOf(s.searchIndex);
    if (win && w) {
      const [n0, n1] = zoomWindow(win[0], win[1], (win[0] + win[1]) / 2, 1, { minSpan: MIN_FLAME_SPAN_NS, bounds: w.home });
      s.flameRel = [n0 - w.home[0], n1 - w.home[0]];
    }
    this.onChange();
  }

  /** Shows or hides the scope table. */
  toggleTable() {
    this.state.tableOpen = !this.state.tableOpen;
    this.onChange();
  }

  /**
   * Sorts the table by `key`; the same key again flips the direction.
   * @param {import('./scope_table.js').SortKey} key
   */
  sortBy(key) {
    const s = this.state;
    if (s.sortKey === key) s.sortDesc = !s.sortDesc;
    else { s.sortKey = key; s.sortDesc = key !== 'name'; }
    this.onChange();
  }

  /** The scope whose callers and callees are shown, or none. @param {string | null} name */
  selectName(name) {
    this.state.selectedName = name === this.state.selectedName ? null : name;
    this.onChange();
  }

  toggleCompensate() {
    this.state.compensate = !this.state.compensate;
    this.onChange();
  }

  /** What the table compares against (a frame, a range or a capture), or none. @param {Baseline | null} b */
  setBaseline(b) {
    this.state.baseline = b;
    this.onChange();
  }

  /** After the store was cleared (another capture): no range, pin, flame window or scroll. Pause stays. */
  clearSelection() {
    const s = this.state;
    s.range = null; s.pinned = -1; s.flameRel = null; s.frozenEnd = 0; s.scrollY = 0; s.dragSel = null; s.held = false;
    s.searchIndex = -1; // the search, the table and its baseline stay: a baseline from another capture compares captures
    this.onChange();
  }
}
