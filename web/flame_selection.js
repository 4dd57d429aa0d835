// @ts-check
// What the flame chart shows: the pinned frame, the zoomed range, or (live) the latest frame that
// carries scopes; its home window (what a reset shows), the ruler's origin, the subtitle and the
// message shown instead of spans. Pure, from the view state and the store. The flame model of the
// selection (flame_model.js, O(scopes) to build) is memoised by the selection's key in
// FlameModelCache, so a redraw that shows the same frames does not rebuild it.

import { SCOPES_PRESENT, SCOPES_EVICTED } from './store.js';
import { buildFlameModel } from './flame_model.js';
import { flameLanes } from './layout.js';
import { formatMs } from './axis.js';
import { plural } from './text.js';
import { untrackedTime } from './untracked.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {import('./view_model.js').ViewState} ViewState */
/** @typedef {import('./view_model.js').Span} Span */
/** @typedef {ReturnType<typeof buildFlameModel>} FlameModel */
/** @typedef {ReturnType<typeof flameLanes>} FlameLanes */
/**
 * @typedef {object} FlameSelection
 * @property {'none' | 'frame' | 'range'} kind
 * @property {number} a           range: first frame (seq); frame: the frame shown
 * @property {number} b           range: end (exclusive); frame: a + 1
 * @property {Span | null} home   the frames' time span (ns), null when nothing is shown
 * @property {number} origin      ruler zero (ns)
 * @property {string} subtitle
 * @property {string} message     shown instead of spans ('' when the spans are drawn)
 * @property {Span | null} pinnedSpan  the pinned frame's time span inside a range
 * @property {string} key         identifies the scopes shown ('' for none)
 */

/** How far back the live view looks for a frame with scopes. */
export const LATEST_SCOPES_LOOKBACK = 100000;

const count = (/** @type {number} */ n) => n.toLocaleString('en-US');

/**
 * The newest frame in [a, b) whose scopes are held, or -1.
 * @param {FrameStore} store @param {boolean} paused @param {number} a @param {number} b
 */
export function latestScopeSeq(store, paused, a, b) {
  if (!paused && store.lastScopeSeq >= a && store.lastScopeSeq < b) return store.lastScopeSeq;
  for (let q = b - 1; q >= a && q >= b - LATEST_SCOPES_LOOKBACK; q--) if (store.scopesState(q) === SCOPES_PRESENT) return q;
  return -1;
}

/**
 * The frame a click at `seq` pins: `seq` itself when its scopes are held or no frame of [a, b) has
 * any (metrics-only captures), else the nearest frame of [a, b) whose scopes are held (the earlier
 * one on a tie). With VOR_RECORD_EVERY most frames carry metrics only; this makes a click show scopes.
 * @param {FrameStore} store @param {number} seq @param {number} a @param {number} b
 */
export function nearestScopeSeq(store, seq, a, b) {
  if (store.scopesState(seq) === SCOPES_PRESENT) return seq;
  for (let d = 1; seq - d >= a || seq + d < b; d++) {
    if (seq - d >= a && store.scopesState(seq - d) === SCOPES_PRESENT) return seq - d;
    if (seq + d < b && store.scopesState(seq + d) === SCOPES_PRESENT) return seq + d;
  }
  return seq;
}

/**
 * The flame chart's selection for the frames [a, b) in view.
 * @param {Readonly<ViewState>} state @param {FrameStore} store @param {number} a @param {number} b
 * @returns {FlameSelection}
 */
export function flameSelection(state, store, a, b) {
  /** @type {FlameSelection} */
  const sel = { kind: 'none', a: 0, b: 0, home: null, origin: 0, subtitle: '', message: '', pinnedSpan: null, key: '' };
  const frameDesc = (/** @type {number} */ q) => `#${store.frameIndexOf(q)}`;
  if (store.size === 0) { sel.message = 'Waiting for frames…'; return sel; }
  if (state.range) {
    let present = 0, scopes = 0;
    for (let q = a; q < b; q++) if (store.scopesState(q) === SCOPES_PRESENT) { present++; scopes += store.scopeCount[q % store.capacity]; }
    sel.kind = 'range'; sel.a = a; sel.b = b;
    sel.key = `r:${a}:${b}:${present}`;
    sel.home = [store.frameStart(a), store.frameStart(b - 1) + store.frameDuration(b - 1)];
    sel.subtitle = `frames ${frameDesc(a)}–${frameDesc(b - 1)} (${plural(b - a, 'frame')}, ${present.toLocaleString('en-US')} with scopes, ${plural(scopes, 'scope')})`;
    if (state.pinned >= 0) {
      sel.pinnedSpan = [store.frameStart(state.pinned), store.frameStart(state.pinned) + store.frameDuration(state.pinned)];
      sel.subtitle += ` · pinned ${frameDesc(state.pinned)} ${formatMs(store.frameMs(state.pinned))}`;
    }
    if (present === 0) sel.message = `No flame frames in frames ${frameDesc(a)}–${frameDesc(b - 1)} (metrics only)`;
  } else {
    const pinnedView = state.pinned >= 0;
    const q = pinnedView && store.has(state.pinned) ? state.pinned : latestScopeSeq(store, state.paused, a, b);
    if (q < 0) {
      sel.message = 'No frame with scopes yet: these frames carry metrics only (enable flame capture to see scopes)';
      return sel;
    }
    const st = store.scopesState(q);
    sel.kind = 'frame'; sel.a = q; sel.b = q + 1;
    sel.key = `f:${q}:${st}`;
    sel.home = [store.frameStart(q), store.frameStart(q) + store.frameDuration(q)];
    const dropped = store.droppedScopes[q % store.capacity];
    sel.subtitle = `${pinnedView ? 'pinned' : state.paused ? 'paused at' : 'latest'} frame ${frameDesc(q)} · ${formatMs(store.frameMs(q))} · ` +
      plural(store.scopeCount[q % store.capacity], 'scope') + (dropped ? ` · ${count(dropped)} dropped by the recorder` : '');
    if (st === SCOPES_EVICTED) {
      sel.message = `The scopes of frame ${frameDesc(q)} were released to keep memory bounded (scope budget ${count(store.scopeBudget)})`;
    } else if (st !== SCOPES_PRESENT) {
      sel.message = `Frame ${frameDesc(q)} carries metrics only (no flame frame was captured for it)`;
    }
  }
  sel.origin = sel.home[0];
  return sel;
}

/**
 * The held frames of a selection whose scopes are present, in time order, as flame_model.js takes them.
 * @param {FlameSelection} sel @param {FrameStore} store
 */
export function selectionFrames(sel, store) {
  /** @type {{seq: number, view: NonNullable<ReturnType<FrameStore['scopes']>>}[]} */
  const frames = [];
  if (sel.kind === 'none') return frames;
  for (let q = sel.a; q < sel.b; q++) {
    const view = store.scopesState(q) === SCOPES_PRESENT ? store.scopes(q) : null;
    if (view) frames.push({ seq: q, view });
  }
  return frames;
}

/** The flame model and lanes of the current selection, rebuilt only when the selection's key changes. */
export class FlameModelCache {
  constructor() {
    this.key = '';
    /** @type {FlameModel | null} */
    this.model = null;
    /** @type {FlameLanes | null} */
    this.lanes = null;
    /** @type {Map<number, import('./untracked.js').UntrackedLane> | null} */
    this.untracked = null;
  }

  /**
   * Model and lanes for `sel` (built when its key differs from the cached one).
   * @param {FlameSelection} sel @param {FrameStore} store
   * @param {(threadId: number) => number} threadOrder  lane order
   */
  get(sel, store, threadOrder) {
    if (sel.key !== this.key) {
      const frames = selectionFrames(sel, store);
      this.model = frames.length ? buildFlameModel(frames, threadOrder) : null;
      this.lanes = flameLanes(this.model);
      this.untracked = frames.length ? untrackedTime(frames) : null;
      this.key = sel.key;
    }
    return this;
  }

  /** The next get() rebuilds (lane order changes when threads are declared). */
  invalidate() { this.key = ''; }

  /** Forgets the model (the store was cleared). */
  clear() { this.key = ''; this.model = null; this.lanes = null; this.untracked = null; }
}
