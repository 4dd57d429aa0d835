// @ts-check
// Panel composition: mountPanel puts the toolbar, the canvas and the tooltip into an element and
// wires the parts together. Data arrives through panel.pushDeclarations / panel.pushFrame (the
// sources in sources/ call these) into the bounded store (store.js); this module does no networking
// and no decoding of .vor bytes.
//
//   import { mountPanel } from './panel.js';
//   const panel = mountPanel(document.getElementById('app'), { budgetMs: 16.7 });
//   panel.pushDeclarations({columns: [...], sites: [...], threads: [...]});
//   panel.pushFrame(uint8ArrayFrameView);
//
// The parts: the view model (view_model.js: pause, pin, range, flame window, pointer) changes only
// through its actions, which input gestures reach through controller.js; one animation-frame path
// (frame_loop.js) runs draw(): reconcile the selection with the store, derive the scene (scene.js:
// axis, flame selection and window, hover), draw it (render/panel.js, which never writes the
// model), then write the tooltip and the toolbar (panel_dom.js, toolbar_text.js).
//
// The shared time axis: the bars and every plot use one frame axis; the pinned frame and the zoomed
// range apply to all of them, and the flame chart shows the pinned frame, or the zoomed range, or
// (live) the latest frame that carries scopes.
//
// Whole captures: above the canvas, the overview strip (render/overview_strip.js) draws every frame
// of the capture from the overview (overview.js): filled from the capture's index by a capture
// session (capture_session.js: a served capture or a file opened on the page, read by random
// access), or frame by frame from a source without an index. The detail view holds a window of at
// most `historyFrames` frames; a click or a drag on the strip asks the session for the window there
// (onWindowRequest), so every frame of a capture of any length is reachable. Frozen (paused, or a
// shift-drag holding the axis), frames that arrive are not let to push frames of the view out of
// the bounded history: the overview counts them and the toolbar says so.
//
// Bounded canvas: at most MAX_PLOT_COLUMNS (64) metric plots (store.js; the toolbar says how many
// columns are not plotted), only the plots inside the scrolled viewport are drawn (scrolling redraws),
// and the backing store is kept within MAX_CANVAS_PX device pixels a side (the backing ratio drops
// below devicePixelRatio rather than the canvas going blank).

import { FrameStore, DEFAULT_HISTORY_FRAMES, MAX_HISTORY_FRAMES, DEFAULT_SCOPE_BUDGET } from './store.js';
import { parseFrameView } from './frame_view.js';
import { Overview } from './overview.js';
import { stripColumns, drawOverviewStrip, frameAtStripX, STRIP_HEIGHT } from './render/overview_strip.js';
import { computeLayout } from './layout.js';
import { nextBarsScale, BARS_SCALE_MODES } from './bars_axis.js';
import { rulerTicks } from './axis.js';
import { createBins } from './binning.js';
import { createTextMeasurer, canvasRawMeasure, plural } from './text.js';
import { THEME, createSiteColors } from './colors.js';
import { RectBatches } from './render/batch.js';
import { createLinePoints } from './render/plots.js';
import { createFlameScratch } from './render/flame.js';
import { drawPanel } from './render/panel.js';
import { attachInput } from './input.js';
import { injectPanelStyle } from './panel_style.js';
import { ViewModel, DEFAULT_BUDGET_MS } from './view_model.js';
import { FlameModelCache } from './flame_selection.js';
import { computeScene, SearchCache } from './scene.js';
import { ScopeTableCache } from './analysis.js';
import { writeScopeTable } from './render/scope_table.js';
import { matchWindow } from './search.js';
import { createController } from './controller.js';
import { toolbarText } from './toolbar_text.js';
import { createFrameLoop } from './frame_loop.js';
import { buildPanelDom, writeToolbar, writeTooltip, writeNotice, writeStatus } from './panel_dom.js';

export { DEFAULT_BUDGET_MS };
export const MAX_CANVAS_PX = 16384; // device pixels a side: browsers leave larger canvases blank

/** @typedef {import('./scene.js').Scene} Scene */
/** @typedef {import('./render/panel.js').DrawResult} DrawResult */
/**
 * @typedef {object} PanelOptions
 * @property {number} [budgetMs]          frame budget (16.7)
 * @property {number} [historyFrames]     frames kept (10,000; 1..100,000)
 * @property {number} [scopeBudget]       scopes kept (2,000,000)
 * @property {import('./input.js').KeyTarget} [keyboardTarget]  receives space/Escape (default: the panel root)
 * @property {string} [title]             toolbar brand ('vor')
 */
/** @typedef {ReturnType<typeof mountPanel>} Panel */

/**
 * The history size asked for, clamped to 1..MAX_HISTORY_FRAMES (with a warning) or the default.
 * @param {unknown} frames
 */
function historyCapacity(frames) {
  let capacity = Math.round(Number(frames ?? DEFAULT_HISTORY_FRAMES)) || DEFAULT_HISTORY_FRAMES;
  if (capacity < 1 || capacity > MAX_HISTORY_FRAMES) {
    console.warn(`vor panel: history of ${capacity} frames is outside 1..${MAX_HISTORY_FRAMES}; clamped`);
    capacity = Math.max(1, Math.min(MAX_HISTORY_FRAMES, capacity));
  }
  return capacity;
}

/**
 * Mounts a panel into `element` (give it a height). Returns the panel API (see the object at the
 * end of this function and web/README.md).
 * @param {HTMLElement} element
 * @param {PanelOptions} [options]
 */
export function mountPanel(element, options = {}) {
  const doc = element.ownerDocument;
  const win = /** @type {Window & typeof globalThis} */ (doc.defaultView);
  injectPanelStyle(doc);
  const store = new FrameStore({ capacity: historyCapacity(options.historyFrames), scopeBudget: options.scopeBudget ?? DEFAULT_SCOPE_BUDGET });
  const loop = createFrameLoop(win, { draw: () => { draw(); }, toolbar: () => refreshToolbar() });
  const requestDraw = () => loop.request('draw');
  const overview = new Overview();
  /** @type {((r: import('./capture_session.js').WindowRequest) => void) | null} */
  let windowRequest = null; // a capture session loads windows (its index fills the overview)
  /** @type {(() => void) | null} */
  let resumeHandler = null;
  let indexProgress = '';
  let skippedWhileFrozen = 0; // frames not stored so the frozen view keeps its frames
  let wasPaused = false;
  const onModelChange = () => {
    const p = model.state.paused;
    if (wasPaused && !p) { skippedWhileFrozen = 0; resumeHandler?.(); }
    wasPaused = p;
    viewChange?.();
    requestDraw();
  };
  /** @type {(() => void) | null} */
  let viewChange = null; // the page keeps its URL in step (main.js)
  const model = new ViewModel(store, { budgetMs: options.budgetMs ?? DEFAULT_BUDGET_MS, onChange: onModelChange });
  const dom = buildPanelDom(element, { title: options.title, budgetMs: model.state.budgetMs });
  const { root, canvas, scroll, strip } = dom;
  const stripCtx = /** @type {CanvasRenderingContext2D} */ (strip.getContext('2d'));
  /** @type {{version: number, width: number, cols: ReturnType<typeof stripColumns>} | null} */
  let stripCache = null;

  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const measureCtx = /** @type {CanvasRenderingContext2D} */ (doc.createElement('canvas').getContext('2d'));
  const measurer = createTextMeasurer(canvasRawMeasure(measureCtx), { font: THEME.font });
  const siteColors = createSiteColors((id) => store.decls.sites.get(id));
  const res = {
    store, dpr: 0, measurer, colorOf: siteColors.colorOf,
    bins: createBins(2048), batches: new RectBatches(), flameScratch: createFlameScratch(),
    linePoints: createLinePoints(), // plot line scratch, grown when needed, kept across draws
  };
  const flameCache = new FlameModelCache();
  const searchCache = new SearchCache();
  const tableCache = new ScopeTableCache();
  let analysisKey = ''; // what the scope table pane shows (rewritten only when it changes)
  let captureName = ''; // names a baseline taken from this capture (setCaptureName)
  /** @param {number} id */
  const threadOrder = (id) => { const t = store.decls.threads.get(id); return t ? t.order : 1e6 + id; };
  let rejected = 0;
  let lastReject = '';
  let destroyed = false;
  /** @type {Scene | null} */
  let scene = null; // the last draw's: what the controller and the API read
  /** @type {DrawResult | null} */
  let drawn = null;
  let cssW = 0, cssH = 0;
  let toolbarKey = '';
  let lastDrawMs = 0;
  let drawCount = 0;

  // ---- drawing: the one path (frame_loop.js), or synchronous through the API
  /**
   * Sizes the canvas to the panel (at least `layoutHeight` tall) within MAX_CANVAS_PX device px a side.
   * @param {number} layoutHeight
   */
  function ensureCanvas(layoutHeight) {
    const w = scroll.clientWidth || element.clientWidth || 800;
    const h = Math.max(scroll.clientHeight || 600, layoutHeight || 0);
    const ratio = Math.min(win.devicePixelRatio || 1, MAX_CANVAS_PX / w, MAX_CANVAS_PX / h);
    if (ratio !== res.dpr) { res.dpr = ratio; measurer.setScale(ratio); }
    if (w !== cssW || h !== cssH || canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      cssW = w; cssH = h;
      canvas.style.height = `${h}px`;
      canvas.width = Math.round(w * ratio);
      canvas.height = Math.round(h * ratio);
    }
  }

  function draw() {
    if (destroyed) return 0;
    const t0 = win.performance.now();
    loop.drawn();
    const columns = store.plotColumns(); // at most MAX_PLOT_COLUMNS
    ensureCanvas(computeLayout(scroll.clientWidth || 800, scroll.clientHeight || 600, columns.length).totalHeight);
    const layout = computeLayout(cssW, cssH, columns.length);
    model.reconcile();
    const top = scroll.scrollTop;
    scene = computeScene({
      state: model.state, frames: model.viewRange(), store, width: cssW, height: cssH, layout, columns,
      viewport: [top, top + (scroll.clientHeight || cssH)], flameCache, threadOrder, searchCache,
      timeOriginNs: overview.count ? overview.startOf(0) : store.originNs,
    });
    model.clampScroll(scene.flame.maxScroll);
    drawn = drawPanel(ctx, scene, res);
    drawStrip();
    writeAnalysis(scene);
    writeTooltip(dom.tooltip, scene.hover);
    refreshToolbar();
    lastDrawMs = win.performance.now() - t0;
    drawCount++;
    return lastDrawMs;
  }

  /** The search count and the scope table pane, from the scene just drawn. @param {Scene} sc */
  function writeAnalysis(sc) {
    const s = model.state, r = sc.search;
    dom.searchCount.textContent = r ? `${r.index >= 0 ? `${(r.index + 1).toLocaleString('en-US')} / ` : ''}${r.count.toLocaleString('en-US')} match${r.count === 1 ? '' : 'es'}` : '';
    dom.searchCount.dataset.none = String(!!r && r.count === 0);
    if (dom.searchInput.value !== s.search && doc.activeElement !== dom.searchInput) dom.searchInput.value = s.search;
    dom.tableBtn.setAttribute('aria-pressed', String(s.tableOpen));
    if (dom.scaleBtn.textContent !== `y: ${s.barsScale}`) dom.scaleBtn.textContent = `y: ${s.barsScale}`;
    if (dom.analysis.hidden === s.tableOpen) { dom.analysis.hidden = !s.tableOpen; requestDraw(); } // the canvas resizes
    if (!s.tableOpen) { analysisKey = ''; return; }
    const t = tableCache.get(store, sc.selection, s.compensate);
    const key = `${tableCache.key}|${s.sortKey}|${s.sortDesc}|${s.selectedName}|${s.search}|${s.baseline ? s.baseline.label : ''}`;
    if (key === analysisKey) return;
    analysisKey = key;
    writeScopeTable(dom.analysis, t, s);
    const match = sc.flame.match;
    if (match) { // names of the table that the search matches
      for (const tr of dom.analysis.querySelectorAll('tr[data-name]')) {
        const name = /** @type {HTMLElement} */ (tr).dataset.name ?? '';
        if (name.toLowerCase().includes(s.search.trim().toLowerCase())) /** @type {HTMLElement} */ (tr).dataset.match = 'true';
      }
    }
  }

  /** Next (1) or previous (-1) search match: the flame window moves to it. @param {number} dir */
  function searchStep(dir) {
    const r = scene && scene.search;
    const fe = scene && scene.flame;
    if (!r || !fe || !r.count) return;
    const w = fe.home ? { t0: fe.t0, t1: fe.t1, home: fe.home, maxScroll: fe.maxScroll } : null;
    model.searchStep(dir, Math.min(r.count, r.list.length), (i) => (r.list[i] ? matchWindow(r.list[i]) : null), w);
  }

  function refreshToolbar() {
    const [a, b] = model.viewRange();
    const s = model.state;
    toolbarKey = writeToolbar(dom, toolbarText({
      store, a, b, paused: s.paused, showOverhead: s.showOverhead, rejected, lastReject,
      captureFrames: overview.totalFrames(), skipped: skippedWhileFrozen,
    }), toolbarKey);
  }

  /** The frame indexes [first, last] the detail view holds, or null. */
  function heldWindow() {
    return store.size ? /** @type {[number, number]} */ ([store.frameIndexOf(store.first), store.frameIndexOf(store.end - 1)]) : null;
  }

  function drawStrip() {
    strip.hidden = overview.count === 0;
    if (strip.hidden) return;
    const w = strip.clientWidth || scroll.clientWidth || 800;
    const ratio = res.dpr || 1;
    if (strip.width !== Math.round(w * ratio) || strip.height !== Math.round(STRIP_HEIGHT * ratio)) {
      strip.width = Math.round(w * ratio);
      strip.height = Math.round(STRIP_HEIGHT * ratio);
    }
    if (!stripCache || stripCache.version !== overview.version || stripCache.width !== w) {
      stripCache = { version: overview.version, width: w, cols: stripColumns(overview, w) };
    }
    stripCtx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const total = overview.totalFrames();
    drawOverviewStrip(stripCtx, stripCache.cols, {
      width: w, budgetNs: model.state.budgetMs * 1e6, window: heldWindow(), progress: indexProgress,
      label: `${plural(total, 'frame')} in the capture`,
      theme: { bg: THEME.region, text: THEME.text, muted: THEME.textMuted, accent: THEME.barOk, warn: THEME.barOver, bad: THEME.barBad },
    });
  }

  /** Pins the slowest held frame whose frame_index is in [i0, i1]; false when none is held. @param {number} i0 @param {number} i1 */
  function pinSlowestIn(i0, i1) {
    let best = -1;
    for (let q = store.first; q < store.end; q++) {
      const fi = store.frameIndexOf(q);
      if (fi < i0 || fi > i1) continue;
      if (best < 0 || store.frameDuration(q) > store.frameDuration(best)) best = q;
    }
    if (best >= 0) model.pinSeq(best);
    return best >= 0;
  }

  // the strip: a click shows the frames there (the slowest of the slice pinned), a drag zooms to them
  /** @type {{x0: number, id: number} | null} */
  let stripDrag = null;
  const stripX = (/** @type {PointerEvent} */ e) => e.clientX - strip.getBoundingClientRect().left;
  strip.addEventListener('pointerdown', (e) => {
    stripDrag = { x0: stripX(e), id: e.pointerId };
    strip.setPointerCapture?.(e.pointerId);
  });
  strip.addEventListener('pointerup', (e) => {
    if (!stripDrag || e.pointerId !== stripDrag.id) return;
    const w = strip.clientWidth, x0 = stripDrag.x0, x1 = stripX(e);
    stripDrag = null;
    if (Math.abs(x1 - x0) >= 3) showFrames(frameAtStripX(overview, w, Math.min(x0, x1)), frameAtStripX(overview, w, Math.max(x0, x1)));
    else showFrameAt(frameAtStripX(overview, w, x1));
  });

  /** Shows frame `f` (a strip click): the slowest frame of its overview entry is pinned. @param {number} f */
  function showFrameAt(f) {
    if (f < 0) return;
    const e = overview.entryOf(f);
    const i0 = e >= 0 ? overview.index[e] : f, i1 = e >= 0 ? i0 + overview.frames[e] - 1 : f;
    const held = heldWindow();
    if (held && i0 >= held[0] && i1 <= held[1]) { pinSlowestIn(i0, i1); return; }
    if (windowRequest) {
      const half = Math.floor(store.capacity / 2);
      windowRequest({ from: Math.max(overview.firstFrame(), i0 - half), to: i1 + half, pin: f, pinRange: [i0, i1] });
    } else {
      writeStatus(dom.status, `frame #${f.toLocaleString('en-US')} has left the bounded history (this source cannot load it again)`, 'warn');
    }
  }

  /** Shows frames [f0, f1] zoomed (a strip drag). @param {number} f0 @param {number} f1 */
  function showFrames(f0, f1) {
    if (f0 < 0) return;
    const held = heldWindow();
    if (held && f0 >= held[0] && f1 <= held[1]) { model.zoomFrameIndexRange(f0, f1); return; }
    if (windowRequest) windowRequest({ from: f0, to: f1, zoom: [f0, f1] });
    else if (held) model.zoomFrameIndexRange(Math.max(f0, held[0]), Math.min(f1, held[1]));
  }

  // ---- input
  const ctl = createController(model, () => scene, requestDraw);
  const detachInput = attachInput(canvas, options.keyboardTarget ?? root, ctl, root);
  dom.pauseBtn.addEventListener('click', () => model.togglePause());
  dom.chip.addEventListener('click', () => model.toggleOverhead());
  dom.scaleBtn.addEventListener('click', () => model.setBarsScale(nextBarsScale(model.state.barsScale)));
  dom.budgetInput.addEventListener('change', () => {
    const v = Number(dom.budgetInput.value);
    if (v > 0 && Number.isFinite(v)) model.setBudget(v); else dom.budgetInput.value = String(model.state.budgetMs);
  });
  // ---- analysis: search, scope table, comparison
  dom.searchInput.addEventListener('input', () => model.setSearch(dom.searchInput.value));
  dom.searchInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); searchStep(e.shiftKey ? -1 : 1); }
    else if (e.key === 'Escape') { dom.searchInput.value = ''; model.setSearch(''); dom.searchInput.blur(); }
  });
  dom.searchPrev.addEventListener('click', () => searchStep(-1));
  dom.searchNext.addEventListener('click', () => searchStep(1));
  const keyTarget = /** @type {import('./input.js').KeyTarget} */ (options.keyboardTarget ?? root);
  const onFindKey = (/** @type {KeyboardEvent} */ e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && (e.key === 'f' || e.key === 'F')) { e.preventDefault(); dom.searchInput.focus(); dom.searchInput.select(); }
  };
  keyTarget.addEventListener('keydown', onFindKey);
  dom.tableBtn.addEventListener('click', () => model.toggleTable());
  dom.analysis.addEventListener('click', (e) => {
    const t = /** @type {HTMLElement | null} */ (e.target instanceof win.Element ? e.target.closest('[data-sort],[data-name],[data-action]') : null);
    if (!t) return;
    if (t.dataset.sort) model.sortBy(/** @type {import('./scope_table.js').SortKey} */ (t.dataset.sort));
    else if (t.dataset.action === 'compensate') model.toggleCompensate();
    else if (t.dataset.action === 'set-baseline' && tableCache.table) {
      const capture = captureName ? `${captureName} ` : '';
      model.setBaseline({ label: `${capture}${tableCache.label}`, table: tableCache.table });
    } else if (t.dataset.action === 'clear-baseline') model.setBaseline(null);
    else if (t.dataset.name !== undefined) model.selectName(t.dataset.name);
  });

  const ro = new win.ResizeObserver(requestDraw);
  ro.observe(scroll);
  scroll.addEventListener('scroll', requestDraw, { passive: true }); // plots scrolled into view are drawn
  // devicePixelRatio changes (zoom, moving to another screen) need a resize and a cleared text cache
  /** @type {MediaQueryList | null} */
  let dprQuery = null;
  const watchDpr = () => {
    dprQuery = win.matchMedia(`(resolution: ${win.devicePixelRatio}dppx)`);
    dprQuery.addEventListener('change', onDpr, { once: true });
  };
  const onDpr = () => { requestDraw(); watchDpr(); };
  watchDpr();

  // ---- data in
  /** @param {string | object} json */
  function pushDeclarations(json) {
    const d = typeof json === 'string' ? JSON.parse(json) : json;
    store.decls.apply(d);
    siteColors.clear(); // a site declared late may have been coloured by id
    if (d && Array.isArray(d.threads) && d.threads.length) flameCache.invalidate(); // lane order may change
    requestDraw();
  }

  /** @param {ArrayBuffer | Uint8Array} bytes */
  function pushFrame(bytes) {
    try {
      const view = parseFrameView(bytes);
      // frozen: a full history keeps the frames on screen; the frame is counted, not stored
      const keep = !(model.frozen() && store.size >= store.capacity);
      if (keep) store.push(view); else skippedWhileFrozen++;
      if (!windowRequest) overview.appendFrame(view.frameIndex, view.startNs, view.durationNs, view.hasScopes);
      if (!keep) { loop.request('toolbar'); return true; }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      rejected++;
      if (rejected === 1 || rejected % 1000 === 0) console.warn(`vor panel: frame view rejected (${rejected} so far): ${message}`);
      lastReject = message;
      requestDraw();
      return false;
    }
    // while paused the canvas only changes when the frozen view loses frames to eviction
    loop.request(model.frameArrivalRedraws(scene ? scene.view.axis.first : null) ? 'draw' : 'toolbar');
    return true;
  }

  function clear() {
    clearWindow();
    overview.clear();
    stripCache = null;
    indexProgress = '';
    writeNotice(dom.notice, null);
    model.state.paused = false;
    wasPaused = false;
    requestDraw();
  }

  /** Drops the frames held (not the overview). */
  function clearWindow() {
    store.clear();
    siteColors.clear();
    flameCache.clear();
    tableCache.clear();
    analysisKey = '';
    rejected = 0;
    skippedWhileFrozen = 0;
    model.clearSelection();
  }

  /**
   * Replaces the frames held by a window of the capture (a capture session): its declarations
   * and frame views. Live: the view follows (the newest frames); otherwise the window is shown
   * paused (resume goes back to the newest frames, onResume).
   * @param {(object | string)[]} declarations @param {Uint8Array[]} views @param {{live: boolean}} o
   */
  function replaceWindow(declarations, views, { live }) {
    clearWindow();
    for (const d of declarations) pushDeclarations(d);
    for (const v of views) {
      try { store.pushBytes(v); } catch (err) { rejected++; lastReject = err instanceof Error ? err.message : String(err); }
    }
    if (live) { model.state.paused = false; wasPaused = false; } else { wasPaused = true; model.pause(); }
    requestDraw();
  }

  function destroy() {
    destroyed = true;
    loop.stop();
    detachInput();
    keyTarget.removeEventListener('keydown', onFindKey);
    ro.disconnect();
    scroll.removeEventListener('scroll', requestDraw);
    dprQuery?.removeEventListener('change', onDpr);
    root.remove();
  }

  requestDraw();

  return {
    /** Merges a declarations object (or JSON text): {columns, sites, threads, clock}. */
    pushDeclarations,
    /** Parses and stores one frame view (ArrayBuffer/Uint8Array, copied). Returns false if rejected. */
    pushFrame,
    /** Drops all frames, declarations, the overview and the selection (before opening another capture). */
    clear,
    /** The whole capture's overview (overview.js): a capture session fills it from the index. */
    overview,
    replaceWindow,
    /** A message over the canvas ({kind: 'error' | 'warn', text}), or none (null). */
    setCanvasMessage(/** @type {{kind: string, text: string} | null} */ m) {
      writeNotice(dom.notice, m ? { title: m.kind === 'error' ? 'This capture cannot be shown' : 'Connection lost', lines: [m.text] } : null);
      if (m) dom.notice.dataset.kind = m.kind;
    },
    /** How far the capture's index got (shown on the strip). @param {{indexed: number, total: number, done: boolean} | null} p */
    setIndexProgress(p) {
      const text = p && !p.done && p.total > 0 ? `indexing ${Math.floor((100 * p.indexed) / p.total)}%` : '';
      if (text !== indexProgress) { indexProgress = text; requestDraw(); }
    },
    /** Paused, or a gesture holds the axis: a session appends nothing meanwhile. */
    isFrozen: () => model.frozen(),
    /** Frames a window holds (the history size). */
    capacity: () => store.capacity,
    /** Who loads the window a strip click or drag asks for (a capture session), or none. */
    onWindowRequest(/** @type {((r: import('./capture_session.js').WindowRequest) => void) | null} */ fn) { windowRequest = fn; },
    /** Called when the user resumes following (a session goes back to the newest frames). */
    onResume(/** @type {(() => void) | null} */ fn) { resumeHandler = fn; },
    /** Pins the slowest held frame with frame_index in [i0, i1]. */
    pinSlowestIn,
    /** Shows frame `index` as a click on the strip does (loading its window when needed). */
    showFrameAt,
    /** Zooms to frames [i0, i1] as a drag on the strip does. */
    showFrames,
    /** Called after every change of the view state (selection, search, table). @param {(() => void) | null} fn */
    onViewChange(fn) { viewChange = fn; },
    /** Names the capture shown (a baseline taken from it says so). @param {string} name */
    setCaptureName(name) { captureName = String(name); },
    /** The scope table of the frames the flame chart shows ({table, label}, scope_table.js), built on demand. */
    scopeTable: () => (scene ? tableCache.get(store, scene.selection, model.state.compensate) : null),
    /** The search's count and the match next/previous reached, as last drawn (null: no search). */
    searchState: () => (scene && scene.search ? { query: scene.search.query, count: scene.search.count, index: scene.search.index } : null),
    /** The status line (kind: info, live, warn, error). @param {string} text @param {string} [kind] */
    setStatus: (text, kind = 'info') => writeStatus(dom.status, text, kind),
    /** Shows a centred notice ({title, lines}) over the panel, or hides it (null). */
    setNotice: (/** @type {{title: string, lines?: string[]} | null} */ content) => writeNotice(dom.notice, content),
    /** Element in the toolbar where a page puts its source controls (capture picker, file button). */
    sourceSlot: dom.sourceSlot,
    root,
    canvas,
    pause: () => model.pause(),
    resume: () => model.resume(),
    togglePause: () => model.togglePause(),
    isPaused: () => model.state.paused,
    /** @param {number} ms */
    setBudget(ms) { if (ms > 0) { model.setBudget(ms); dom.budgetInput.value = String(ms); } },
    /** The bars' y axis: 'fit' (default), 'budget' or 'log'. @param {import('./bars_axis.js').BarsScaleMode} mode */
    setBarsScale(mode) { if (BARS_SCALE_MODES.includes(mode)) model.setBarsScale(mode); },
    /** Pins a frame by its frame_index (as the C side numbered it); returns false if not held. */
    pinFrameIndex: (/** @type {number} */ index) => model.pinFrameIndex(index),
    /** Zooms every graph to frames whose frame_index is in [i0, i1]. */
    zoomFrameIndexRange: (/** @type {number} */ i0, /** @type {number} */ i1) => model.zoomFrameIndexRange(i0, i1),
    /** x (canvas CSS px) of the centre of frame `index` on the shared frame axis, or null if not in view. */
    xOfFrameIndex(/** @type {number} */ index) {
      if (!scene) return null;
      const ax = scene.view.axis;
      for (let q = ax.first; q < ax.end; q++) {
        if (store.frameIndexOf(q) !== index) continue;
        if (!ax.binned) return ax.xCenter(q);
        return ax.x0 + Math.min(ax.bins - 1, Math.floor(((q - ax.first) * ax.bins) / ax.n)) + 0.5;
      }
      return null;
    },
    /** Draws now, synchronously; returns the time taken in ms. */
    draw,
    requestDraw,
    /** Layout rectangles in canvas CSS pixels: {bars, plots: [...], flame} (each with .chart). */
    regions: () => (scene ? scene.layout : null),
    /** A snapshot of the view state, for tests and embedding pages. */
    viewState() {
      const s = model.state;
      const fe = scene ? scene.flame : null;
      return {
        paused: s.paused,
        pinnedFrameIndex: s.pinned >= 0 && store.has(s.pinned) ? store.frameIndexOf(s.pinned) : null,
        range: s.range ? [store.frameIndexOf(s.range[0]), store.frameIndexOf(s.range[1] - 1)] : null,
        framesInView: scene ? scene.view.axis.n : 0,
        flameWindowNs: fe && fe.t1 > fe.t0 ? [fe.t0, fe.t1] : null,
        flameScopes: fe && fe.model ? fe.model.nScopes : 0,
        search: s.search,
        tableOpen: s.tableOpen,
        barsScale: scene ? { mode: scene.view.scale.mode, lo: scene.view.scale.lo, hi: scene.view.scale.hi, ticks: scene.view.scale.ticks.map((t) => t.label) } : null,
        xTicks: scene ? scene.view.xTicks.map((t) => `${t.frame} ${t.time}`) : [],
        rulerLabels: scene && fe && fe.model ? rulerTicks(fe.t0, fe.t1, fe.origin, scene.layout.flame.chart.w).map((t) => t.label) : [],
        untracked: fe && fe.untracked ? [...fe.untracked.values()].map((u) => ({ threadId: u.threadId, ns: u.totalNs, frameNs: u.frameNs, gaps: u.gaps.length / 2 })) : [],
        flameStats: drawn ? drawn.flameStats : null,
        frames: store.size,
        captureFrames: overview.totalFrames(),
        window: heldWindow(),
        skippedWhileFrozen,
        held: model.state.held,
        scopes: store.totalScopes,
        rejected,
        plots: scene ? scene.columns.length : 0,
        plotsDrawn: drawn ? drawn.plotsDrawn : 0,
        hiddenColumns: store.hiddenColumns(),
        lastDrawMs,
        drawCount,
        tooltip: dom.tooltip.hidden ? null : dom.tooltip.innerText,
      };
    },
    store,
    /** The view model (selection, pause, flame window), for tests and embedding pages. */
    model,
    destroy,
  };
}
