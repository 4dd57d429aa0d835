// @ts-check
// The scene: everything one draw shows, derived from the view state, the store and the canvas
// size, before anything is drawn. The frames in view and their shared axis, what the bars and plots
// mark (pin, range, drag selection), which plots are inside the scrolled viewport, the flame
// chart's selection, window and scroll bound, and the hover. Pure apart from the flame model memo
// (flame_selection.js); it never writes the view state (the frame path applies `flame.maxScroll`
// through ViewModel.clampScroll). The renderers draw a scene; the controller maps pointer gestures
// through the last one.

import { frameAxis } from './axis.js';
import { barsScale, frameTicks } from './bars_axis.js';
import { flameSelection } from './flame_selection.js';
import { computeHover } from './hover.js';
import { siteMatcher, framesWithMatches, flameMatches } from './search.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {import('./store.js').Column} Column */
/** @typedef {import('./view_model.js').ViewState} ViewState */
/** @typedef {import('./view_model.js').Span} Span */
/** @typedef {import('./flame_selection.js').FlameModelCache} FlameModelCache */
/** @typedef {import('./hover.js').Hover} Hover */
/** @typedef {import('./hover.js').FrameAxis} FrameAxis */
/** @typedef {import('./hover.js').Layout} Layout */
/** @typedef {import('./render/flame.js').FlameView} FlameView */
/**
 * What the bars and the plots show (render/bars.js, render/plots.js).
 * @typedef {object} FramesView
 * @property {FrameAxis} axis
 * @property {number} budgetMs
 * @property {number} pinned               seq, -1 for none
 * @property {Span | null} range
 * @property {boolean} showOverhead
 * @property {Span | null} dragSel         the drag selection as frames (seq), or null
 * @property {string} emptyMessage         shown on the bars when no frame is in view
 * @property {Uint8Array | null} searchFrames  per frame in view (seq - axis.first): 1 holds a search match
 * @property {import('./bars_axis.js').BarsScale} scale   the bars' y axis (bars_axis.js)
 * @property {{seq: number, frame: string, time: string}[]} xTicks   the frame axis's ticks and labels
 */
/**
 * @typedef {object} Scene
 * @property {number} width               canvas CSS px
 * @property {number} height
 * @property {Layout} layout
 * @property {Column[]} columns           plotted columns, in plot order
 * @property {boolean[]} plotVisible      per plot: inside the scrolled viewport (drawn)
 * @property {number} a                   frames in view [a, b) (seq)
 * @property {number} b
 * @property {FramesView} view
 * @property {FlameView & {home: Span | null, maxScroll: number, match: ((site: number) => boolean) | null}} flame
 * @property {Hover | null} hover
 * @property {import('./flame_selection.js').FlameSelection} selection  the frames the flame chart (and the scope table) show
 * @property {{query: string, count: number, list: import('./search.js').SearchMatch[], index: number} | null} search
 */
/**
 * Memo of the search's derived data: the site predicate (per query and declarations), the flame
 * matches (per flame model) and the frames holding a match (per frames in view).
 */
export class SearchCache {
  constructor() {
    /** @type {{key: string, match: ((site: number) => boolean) | null}} */
    this.matcher = { key: '', match: null };
    /** @type {{model: object | null, match: object | null, r: ReturnType<typeof flameMatches>}} */
    this.flame = { model: null, match: null, r: { count: 0, list: [] } };
    /** @type {{key: string, match: object | null, frames: Uint8Array | null}} */
    this.frames = { key: '', match: null, frames: null };
  }
}

/** Widest frame slot (CSS px) when few frames are in view (live view and overview). */
export const MAX_SLOT_PX = 14;
/** A flame home with no duration gets this width (ns). */
const EMPTY_HOME_NS = 1e6;

/**
 * The flame chart's window and scroll for a selection: its home (widened to the scopes it shows),
 * the window (home, or the user's window relative to it), the scroll bound and the clamped scroll.
 * @param {import('./flame_selection.js').FlameSelection} sel
 * @param {FlameModelCache} cache   holds the selection's model and lanes
 * @param {Readonly<ViewState>} state
 * @param {number} chartHeight      the flame chart's height (CSS px)
 */
export function flameWindow(sel, cache, state, chartHeight) {
  const model = cache.model;
  let home = sel.home;
  if (home && model && model.nScopes) home = [Math.min(home[0], model.t0), Math.max(home[1], model.t1)];
  if (home && !(home[1] > home[0])) home = [home[0], home[0] + EMPTY_HOME_NS];
  let fw = home;
  if (home && state.flameRel) fw = [home[0] + state.flameRel[0], home[0] + state.flameRel[1]];
  const maxScroll = Math.max(0, (cache.lanes ? cache.lanes.height : 0) - chartHeight + 8);
  return {
    home, t0: fw ? fw[0] : 0, t1: fw ? fw[1] : 0, maxScroll,
    scrollY: Math.max(0, Math.min(state.scrollY, maxScroll)),
  };
}

/**
 * The scene for one draw.
 * @param {object} args
 * @param {Readonly<ViewState>} args.state
 * @param {Span} args.frames            frames in view [a, b) (ViewModel.viewRange)
 * @param {FrameStore} args.store
 * @param {number} args.width           canvas CSS size
 * @param {number} args.height
 * @param {Layout} args.layout
 * @param {Column[]} args.columns
 * @param {Span} args.viewport          the scrolled viewport [top, bottom) in canvas CSS px
 * @param {FlameModelCache} args.flameCache
 * @param {(threadId: number) => number} args.threadOrder
 * @param {SearchCache} [args.searchCache]
 * @param {number} [args.timeOriginNs]   zero of the time axis (the capture's first frame); NaN: the first frame in view
 * @returns {Scene}
 */
export function computeScene({ state, frames: [a, b], store, width, height, layout, columns, viewport, flameCache, threadOrder, searchCache = new SearchCache(), timeOriginNs = NaN }) {
  const axis = frameAxis({
    first: a, end: b, left: layout.chartX, width: layout.chartW,
    maxSlotPx: state.range ? Infinity : MAX_SLOT_PX, alignRight: !state.range,
  });
  const dragSel = state.dragSel ? /** @type {Span} */ ([axis.seqNear(state.dragSel[0]), axis.seqNear(state.dragSel[1])]) : null;
  const emptyMessage = store.size === 0 ? 'Waiting for frames…'
    : 'The paused frames have left the bounded history: resume (space) to follow the stream';
  const sc = searchCache;
  const mkey = `${state.search}\u0000${store.decls.version}`;
  if (sc.matcher.key !== mkey) sc.matcher = { key: mkey, match: siteMatcher(store.decls, state.search) };
  const match = sc.matcher.match;
  const fkey = `${a}:${b}:${store.first}:${store.totalScopes}`;
  if (sc.frames.key !== fkey || sc.frames.match !== match) sc.frames = { key: fkey, match, frames: match ? framesWithMatches(store, a, b, match) : null };
  const ms = store.frameMsSeries(a, b);
  let minMs = Infinity, maxMs = -Infinity;
  for (let i = 0; i < b - a; i++) { const v = ms[i]; if (v < minMs) minMs = v; if (v > maxMs) maxMs = v; }
  const origin = Number.isFinite(timeOriginNs) ? timeOriginNs : b > a ? store.frameStart(a) : 0;
  /** @type {FramesView} */
  const view = {
    axis, budgetMs: state.budgetMs, pinned: state.pinned, range: state.range, showOverhead: state.showOverhead, dragSel, emptyMessage,
    searchFrames: sc.frames.frames,
    scale: barsScale(state.barsScale, minMs, maxMs, state.budgetMs),
    xTicks: frameTicks({
      first: a, end: b, count: Math.max(2, Math.floor(axis.used / 150)),
      indexOf: (q) => store.frameIndexOf(q), startOf: (q) => store.frameStart(q), originNs: origin,
    }),
  };
  // plots outside the scrolled viewport are not drawn: scrolling them in redraws
  const plotVisible = columns.map((_, i) => {
    const r = layout.plots[i];
    return !(r.y + r.h <= viewport[0] || r.y >= viewport[1]);
  });

  const sel = flameSelection(state, store, a, b);
  flameCache.get(sel, store, threadOrder);
  const w = flameWindow(sel, flameCache, state, layout.flame.chart.h);
  const flame = {
    model: sel.message ? null : flameCache.model, lanes: flameCache.lanes, t0: w.t0, t1: w.t1,
    origin: sel.origin, scrollY: w.scrollY, pinnedSpan: sel.pinnedSpan, subtitle: sel.subtitle, message: sel.message,
    home: w.home, maxScroll: w.maxScroll, match, untracked: sel.message ? null : flameCache.untracked,
  };
  if (sc.flame.model !== flame.model || sc.flame.match !== match) sc.flame = { model: flame.model, match, r: flameMatches(flame.model, match) };
  const search = match ? { query: state.search, count: sc.flame.r.count, list: sc.flame.r.list, index: Math.min(state.searchIndex, sc.flame.r.count - 1) } : null;
  const hover = computeHover({ pointer: state.pointer, dragging: !!state.dragSel, layout, axis, flame, columns, store, budgetMs: state.budgetMs });
  return { width, height, layout, columns, plotVisible, a, b, view, flame, hover, search, selection: sel };
}
