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
// Bounded canvas: at most MAX_PLOT_COLUMNS (64) metric plots (store.js; the toolbar says how many
// columns are not plotted), only the plots inside the scrolled viewport are drawn (scrolling redraws),
// and the backing store is kept within MAX_CANVAS_PX device pixels a side (the backing ratio drops
// below devicePixelRatio rather than the canvas going blank).

import { FrameStore, DEFAULT_HISTORY_FRAMES, MAX_HISTORY_FRAMES, DEFAULT_SCOPE_BUDGET } from './store.js';
import { computeLayout } from './layout.js';
import { createBins } from './binning.js';
import { createTextMeasurer, canvasRawMeasure } from './text.js';
import { THEME, createSiteColors } from './colors.js';
import { RectBatches } from './render/batch.js';
import { createLinePoints } from './render/plots.js';
import { createFlameScratch } from './render/flame.js';
import { drawPanel } from './render/panel.js';
import { attachInput } from './input.js';
import { injectPanelStyle } from './panel_style.js';
import { ViewModel, DEFAULT_BUDGET_MS } from './view_model.js';
import { FlameModelCache } from './flame_selection.js';
import { computeScene } from './scene.js';
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
  const model = new ViewModel(store, { budgetMs: options.budgetMs ?? DEFAULT_BUDGET_MS, onChange: requestDraw });
  const dom = buildPanelDom(element, { title: options.title, budgetMs: model.state.budgetMs });
  const { root, canvas, scroll } = dom;

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
      viewport: [top, top + (scroll.clientHeight || cssH)], flameCache, threadOrder,
    });
    model.clampScroll(scene.flame.maxScroll);
    drawn = drawPanel(ctx, scene, res);
    writeTooltip(dom.tooltip, scene.hover);
    refreshToolbar();
    lastDrawMs = win.performance.now() - t0;
    drawCount++;
    return lastDrawMs;
  }

  function refreshToolbar() {
    const [a, b] = model.viewRange();
    const s = model.state;
    toolbarKey = writeToolbar(dom, toolbarText({ store, a, b, paused: s.paused, showOverhead: s.showOverhead, rejected, lastReject }), toolbarKey);
  }

  // ---- input
  const ctl = createController(model, () => scene, requestDraw);
  const detachInput = attachInput(canvas, options.keyboardTarget ?? root, ctl, root);
  dom.pauseBtn.addEventListener('click', () => model.togglePause());
  dom.chip.addEventListener('click', () => model.toggleOverhead());
  dom.budgetInput.addEventListener('change', () => {
    const v = Number(dom.budgetInput.value);
    if (v > 0 && Number.isFinite(v)) model.setBudget(v); else dom.budgetInput.value = String(model.state.budgetMs);
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
      store.pushBytes(bytes);
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
    store.clear();
    siteColors.clear();
    flameCache.clear();
    rejected = 0;
    model.clearSelection();
  }

  function destroy() {
    destroyed = true;
    loop.stop();
    detachInput();
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
    /** Drops all frames and declarations (e.g. before opening another capture). */
    clear,
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
        flameStats: drawn ? drawn.flameStats : null,
        frames: store.size,
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
