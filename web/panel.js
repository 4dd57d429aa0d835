// Panel composition: mounts the toolbar, the canvas and the tooltip into an element, owns the view
// state (pause, pinned frame, zoomed frame range, flame window) and draws at most once per animation
// frame when something changed. Data arrives through panel.pushDeclarations / panel.pushFrame (the
// sources in sources/ call these); this module does no networking and no decoding of .vor bytes.
//
//   import { mountPanel } from './panel.js';
//   const panel = mountPanel(document.getElementById('app'), { budgetMs: 16.7 });
//   panel.pushDeclarations({columns: [...], sites: [...], threads: [...]});
//   panel.pushFrame(uint8ArrayFrameView);
//
// The shared time axis: the bars and every plot use one frame axis (layout.js, axis.js frameAxis);
// the pinned frame and the zoomed range apply to all of them, and the flame chart shows the pinned
// frame, or the zoomed range, or (live) the latest frame that carries scopes.
//
// Bounded canvas: at most MAX_PLOT_COLUMNS (64) metric plots (store.js; the toolbar says how many
// columns are not plotted), only the plots inside the scrolled viewport are drawn (scrolling redraws),
// and the backing store is kept within MAX_CANVAS_PX device pixels a side (the backing ratio drops
// below devicePixelRatio rather than the canvas going blank).

import { FrameStore, SCOPES_PRESENT, SCOPES_EVICTED, DEFAULT_HISTORY_FRAMES, MAX_HISTORY_FRAMES, DEFAULT_SCOPE_BUDGET, MAX_PLOT_COLUMNS } from './store.js';
import { frameAxis, zoomWindow, panWindow, formatNs, formatMs } from './axis.js';
import { computeLayout, flameLanes, inside } from './layout.js';
import { createBins, binRange } from './binning.js';
import { createTextMeasurer, canvasRawMeasure } from './text.js';
import { THEME, siteColorIndex } from './colors.js';
import { RectBatches } from './render/batch.js';
import { drawBars } from './render/bars.js';
import { drawPlot, createLinePoints } from './render/plots.js';
import { drawFlame, flameHitTest, createFlameScratch } from './render/flame.js';
import { buildFlameModel } from './flame_model.js';
import { attachInput } from './input.js';
import { spanTooltip, bucketTooltip, frameTooltip, plotTooltip } from './tooltip.js';
import { injectPanelStyle } from './panel_style.js';

export const DEFAULT_BUDGET_MS = 16.7;
const MAX_SLOT_PX = 14; // widest bar when few frames are in view (live/overview)
export const MAX_CANVAS_PX = 16384; // device pixels a side: browsers leave larger canvases blank

function el(doc, tag, cls, attrs = {}) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

/**
 * Mounts a panel into `element`. options:
 *   budgetMs (16.7), historyFrames (10,000; max 100,000), scopeBudget (2,000,000 scopes),
 *   keyboardTarget (element receiving keydown for space/Escape; default the panel root),
 *   title ('vor').
 * Returns the panel API (see the object at the end of this function and web/README.md).
 */
export function mountPanel(element, options = {}) {
  const doc = element.ownerDocument;
  const win = doc.defaultView;
  injectPanelStyle(doc);

  let capacity = Math.round(Number(options.historyFrames ?? DEFAULT_HISTORY_FRAMES)) || DEFAULT_HISTORY_FRAMES;
  if (capacity < 1 || capacity > MAX_HISTORY_FRAMES) {
    console.warn(`vor panel: history of ${capacity} frames is outside 1..${MAX_HISTORY_FRAMES}; clamped`);
    capacity = Math.max(1, Math.min(MAX_HISTORY_FRAMES, capacity));
  }
  const store = new FrameStore({
    capacity,
    scopeBudget: options.scopeBudget ?? DEFAULT_SCOPE_BUDGET,
  });

  // ---- DOM
  const root = el(doc, 'div', 'vor-panel', { tabindex: '0' });
  const toolbar = el(doc, 'div', 'vor-toolbar');
  const brand = el(doc, 'span', 'vor-brand');
  brand.textContent = options.title ?? 'vor';
  const pauseBtn = el(doc, 'button', 'vor-pause', { type: 'button', title: 'Freeze / follow the stream (space)' });
  const budgetLabel = el(doc, 'label', 'vor-budget', { title: 'Frame budget: bars over it turn amber, over twice it red' });
  const budgetInput = el(doc, 'input', '', { type: 'number', min: '0.1', step: '0.1' });
  budgetLabel.append('budget', budgetInput, 'ms');
  const chip = el(doc, 'button', 'vor-chip vor-overhead', { type: 'button', 'aria-pressed': 'false' });
  const clockChip = el(doc, 'span', 'vor-clock', { hidden: '' });
  const stats = el(doc, 'span', 'vor-stats');
  const spacer = el(doc, 'span', 'vor-spacer');
  const sourceSlot = el(doc, 'span', 'vor-source');
  const status = el(doc, 'span', 'vor-status', { role: 'status' });
  toolbar.append(brand, pauseBtn, budgetLabel, chip, clockChip, stats, spacer, sourceSlot, status);
  const scroll = el(doc, 'div', 'vor-scroll');
  const canvas = el(doc, 'canvas', 'vor-canvas');
  const tooltip = el(doc, 'div', 'vor-tooltip', { hidden: '' });
  const notice = el(doc, 'div', 'vor-notice', { hidden: '' });
  scroll.append(canvas);
  root.append(toolbar, scroll, tooltip, notice);
  element.append(root);

  const ctx = canvas.getContext('2d');
  const measureCanvas = doc.createElement('canvas');
  const measurer = createTextMeasurer(canvasRawMeasure(measureCanvas.getContext('2d')), { font: THEME.font });

  // ---- state
  const state = {
    paused: false,
    frozenEnd: 0,
    range: null, // [a, b) seq
    pinned: -1,
    flameRel: null, // [r0, r1] relative to the flame home start; null = home
    scrollY: 0,
    budgetMs: options.budgetMs ?? DEFAULT_BUDGET_MS,
    showOverhead: false,
    dragSel: null,
    pointer: null, // {x, y, clientX, clientY}
  };
  budgetInput.value = String(state.budgetMs);
  let rejected = 0;
  let lastReject = '';
  let destroyed = false;

  const bins = createBins(2048);
  const batches = new RectBatches();
  const flameScratch = createFlameScratch();
  const linePoints = createLinePoints(); // plot line scratch, grown when needed, kept across draws
  const siteColors = new Map();
  const colorOf = (id) => {
    let c = siteColors.get(id);
    if (c === undefined) { c = siteColorIndex(store.decls.sites.get(id), id); siteColors.set(id, c); }
    return c;
  };
  let flameCache = { key: '', model: null, lanes: null };
  let frame = null; // last draw's computed geometry: layout, axis, flame env
  let dpr = 0;
  let cssW = 0, cssH = 0;
  let rafId = 0;
  let dirty = true;
  let lastDrawMs = 0;
  let drawCount = 0;
  let plotsDrawn = 0;

  // ---- drawing
  function requestDraw() {
    dirty = true;
    if (rafId || destroyed) return;
    rafId = win.requestAnimationFrame(() => { rafId = 0; if (dirty) draw(); });
  }

  function viewRange() {
    if (state.range) {
      const a = Math.max(state.range[0], store.first), b = Math.min(state.range[1], store.end);
      if (b > a) return [a, b];
      state.range = null;
    }
    if (state.paused) return [store.first, Math.max(store.first, Math.min(state.frozenEnd, store.end))];
    return [store.first, store.end];
  }

  function latestScopeSeq(a, b) {
    if (!state.paused && store.lastScopeSeq >= a && store.lastScopeSeq < b) return store.lastScopeSeq;
    for (let q = b - 1; q >= a && q >= b - 100000; q--) if (store.scopesState(q) === SCOPES_PRESENT) return q;
    return -1;
  }

  /** What the flame chart shows: a model (cached), its home window and texts. */
  function flameSelection(a, b) {
    const sel = { frames: [], home: null, origin: 0, subtitle: '', message: '', pinnedSpan: null, key: '' };
    const frameDesc = (q) => `#${store.frameIndexOf(q)}`;
    if (store.size === 0) { sel.message = 'Waiting for frames…'; return sel; }
    if (state.range) {
      let present = 0, scopes = 0;
      for (let q = a; q < b; q++) if (store.scopesState(q) === SCOPES_PRESENT) { present++; scopes += store.scopeCount[q % store.capacity]; }
      sel.key = `r:${a}:${b}:${present}`;
      for (let q = a; q < b && sel.key !== flameCache.key; q++) {
        if (store.scopesState(q) === SCOPES_PRESENT) sel.frames.push({ seq: q, view: store.scopes(q) });
      }
      sel.home = [store.frameStart(a), store.frameStart(b - 1) + store.frameDuration(b - 1)];
      sel.subtitle = `frames ${frameDesc(a)}–${frameDesc(b - 1)} (${b - a} frames, ${present} with scopes, ${scopes.toLocaleString('en-US')} scopes)`;
      if (state.pinned >= 0) {
        sel.pinnedSpan = [store.frameStart(state.pinned), store.frameStart(state.pinned) + store.frameDuration(state.pinned)];
        sel.subtitle += ` · pinned ${frameDesc(state.pinned)} ${formatMs(store.frameMs(state.pinned))}`;
      }
      if (present === 0) sel.message = `No flame frames in frames ${frameDesc(a)}–${frameDesc(b - 1)} (metrics only)`;
    } else {
      const q = state.pinned >= 0 && store.has(state.pinned) ? state.pinned : latestScopeSeq(a, b);
      const pinnedView = state.pinned >= 0;
      if (q < 0) {
        sel.message = 'No frame with scopes yet: these frames carry metrics only (enable flame capture to see scopes)';
        return sel;
      }
      const st = store.scopesState(q);
      sel.key = `f:${q}:${st}`;
      sel.home = [store.frameStart(q), store.frameStart(q) + store.frameDuration(q)];
      const dropped = store.droppedScopes[q % store.capacity];
      sel.subtitle = `${pinnedView ? 'pinned' : state.paused ? 'paused at' : 'latest'} frame ${frameDesc(q)} · ${formatMs(store.frameMs(q))} · ` +
        `${store.scopeCount[q % store.capacity].toLocaleString('en-US')} scopes` + (dropped ? ` · ${dropped} dropped by the recorder` : '');
      if (st === SCOPES_PRESENT) {
        if (sel.key !== flameCache.key) sel.frames.push({ seq: q, view: store.scopes(q) });
      } else if (st === SCOPES_EVICTED) {
        sel.message = `The scopes of frame ${frameDesc(q)} were released to keep memory bounded (scope budget ${store.scopeBudget.toLocaleString('en-US')})`;
      } else {
        sel.message = `Frame ${frameDesc(q)} carries metrics only (no flame frame was captured for it)`;
      }
    }
    sel.origin = sel.home[0];
    return sel;
  }

  function ensureCanvas(layoutHeight) {
    const w = scroll.clientWidth || element.clientWidth || 800;
    const h = Math.max(scroll.clientHeight || 600, layoutHeight || 0);
    const ratio = Math.min(win.devicePixelRatio || 1, MAX_CANVAS_PX / w, MAX_CANVAS_PX / h);
    if (ratio !== dpr) { dpr = ratio; measurer.setScale(ratio); }
    if (w !== cssW || h !== cssH || canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      cssW = w; cssH = h;
      canvas.style.height = `${h}px`;
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
  }

  function draw() {
    if (destroyed) return 0;
    const t0 = win.performance.now();
    dirty = false;
    const columns = store.plotColumns(); // at most MAX_PLOT_COLUMNS
    let layout = computeLayout(scroll.clientWidth || 800, scroll.clientHeight || 600, columns.length);
    ensureCanvas(layout.totalHeight);
    layout = computeLayout(cssW, cssH, columns.length);

    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = THEME.background;
    ctx.fillRect(0, 0, cssW, cssH);

    const [a, b] = viewRange();
    if (state.pinned >= 0 && !store.has(state.pinned)) state.pinned = -1;
    const axis = frameAxis({
      first: a, end: b, left: layout.chartX, width: layout.chartW,
      maxSlotPx: state.range ? Infinity : MAX_SLOT_PX, alignRight: !state.range,
    });
    const dragSel = state.dragSel ? state.dragSel.map((x) => axis.seqNear(x)) : null;
    const emptyMessage = store.size === 0 ? 'Waiting for frames…'
      : 'The paused frames have left the bounded history: resume (space) to follow the stream';
    const view = { axis, budgetMs: state.budgetMs, pinned: state.pinned, range: state.range, showOverhead: state.showOverhead, dragSel, emptyMessage };
    const env = { store, view, bins, batches, measurer, dpr, linePoints };

    const barsInfo = drawBars(ctx, layout.bars, env);
    // plots outside the scrolled viewport are not drawn (null): scrolling them in redraws
    const top = scroll.scrollTop, bottom = top + (scroll.clientHeight || cssH);
    plotsDrawn = 0;
    const plotInfo = columns.map((col, i) => {
      const r = layout.plots[i];
      if (r.y + r.h <= top || r.y >= bottom) return null;
      plotsDrawn++;
      return drawPlot(ctx, r, col, i, env);
    });

    // flame chart
    const sel = flameSelection(a, b);
    if (sel.key !== flameCache.key) {
      const threadOrder = (id) => { const t = store.decls.threads.get(id); return t ? t.order : 1e6 + id; };
      const model = sel.frames.length ? buildFlameModel(sel.frames, threadOrder) : null;
      flameCache = { key: sel.key, model, lanes: flameLanes(model) };
    }
    const model = flameCache.model;
    let home = sel.home;
    if (home && model && model.nScopes) home = [Math.min(home[0], model.t0), Math.max(home[1], model.t1)];
    if (home && !(home[1] > home[0])) home = [home[0], home[0] + 1e6];
    let fw = home;
    if (home && state.flameRel) fw = [home[0] + state.flameRel[0], home[0] + state.flameRel[1]];
    const maxScroll = Math.max(0, (flameCache.lanes ? flameCache.lanes.height : 0) - layout.flame.chart.h + 8);
    state.scrollY = Math.max(0, Math.min(state.scrollY, maxScroll));
    const flameEnv = {
      model: sel.message ? null : model, lanes: flameCache.lanes, t0: fw ? fw[0] : 0, t1: fw ? fw[1] : 0,
      origin: sel.origin, scrollY: state.scrollY, decls: store.decls, colorOf, measurer, batches,
      scratch: flameScratch, dpr, hover: null, pinnedSpan: sel.pinnedSpan, subtitle: sel.subtitle, message: sel.message,
    };
    const hoverInfo = computeHover(layout, axis, flameEnv, columns);
    flameEnv.hover = hoverInfo && hoverInfo.region === 'flame' ? hoverInfo.hit : null;
    const flameStats = drawFlame(ctx, layout.flame, flameEnv);

    drawSharedOverlays(layout, axis, columns.length, hoverInfo);
    frame = { layout, axis, flameEnv, home, columns, barsInfo, plotInfo, flameStats, maxScroll };
    updateTooltip(hoverInfo);
    updateToolbar(a, b);
    lastDrawMs = win.performance.now() - t0;
    drawCount++;
    return lastDrawMs;
  }

  // pinned frame and hover cursor across the bars and every plot (the shared axis made visible)
  function drawSharedOverlays(layout, axis, nPlots, hoverInfo) {
    const top = layout.bars.chart.y;
    const bottom = nPlots ? layout.plots[nPlots - 1].y + layout.plots[nPlots - 1].h : layout.bars.chart.y + layout.bars.chart.h;
    const column = (seq, style, width) => {
      if (seq < axis.first || seq >= axis.end) return;
      const x0 = axis.xOf(seq);
      const w = Math.max(width, axis.slot);
      ctx.fillStyle = style;
      ctx.fillRect(Math.round(x0 + axis.slot / 2 - w / 2), top, w, bottom - top);
    };
    if (hoverInfo && hoverInfo.seq >= 0 && hoverInfo.seq !== state.pinned) column(hoverInfo.seq, 'rgba(255,255,255,0.07)', 1);
    if (state.pinned >= 0) {
      column(state.pinned, 'rgba(242,244,248,0.16)', 3);
      const x = Math.round(axis.xCenter(state.pinned)) + 0.5;
      if (state.pinned >= axis.first && state.pinned < axis.end) {
        ctx.strokeStyle = THEME.pinned;
        ctx.lineWidth = 1;
        ctx.setLineDash([3, 3]);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.fillStyle = THEME.pinned;
        ctx.beginPath();
        ctx.moveTo(x - 5, top - 7);
        ctx.lineTo(x + 5, top - 7);
        ctx.lineTo(x, top - 1);
        ctx.closePath();
        ctx.fill();
      }
    }
  }

  /** Frame for a click or hover at x: the frame under x, or the slowest frame of the pixel's bin. */
  function frameAtX(axis, x) {
    if (!axis.binned) return { seq: axis.seqAt(x), binFrames: 1 };
    const b = Math.floor(x - axis.x0);
    if (b < 0 || b >= axis.bins) return { seq: -1, binFrames: 0 };
    const [i0, i1] = binRange(b, axis.n, axis.bins);
    return { seq: store.slowestIn(axis.first + i0, axis.first + i1), binFrames: i1 - i0, i0, i1 };
  }

  function computeHover(layout, axis, flameEnv, columns) {
    const p = state.pointer;
    if (!p || state.dragSel) return null;
    if (inside(layout.bars.chart, p.x, p.y)) {
      const f = frameAtX(axis, p.x);
      if (f.seq < 0) return null;
      const s = store.scopesState(f.seq);
      return {
        region: 'bars', seq: f.seq, p,
        tip: frameTooltip({
          frameIndex: store.frameIndexOf(f.seq), ms: store.frameMs(f.seq), budgetMs: state.budgetMs,
          overheadNs: store.frameOverhead(f.seq), nScopes: store.scopeCount[f.seq % store.capacity],
          scopeState: s === SCOPES_PRESENT ? 'present' : s === SCOPES_EVICTED ? 'evicted' : 'none', binFrames: f.binFrames,
        }),
      };
    }
    for (let i = 0; i < columns.length; i++) {
      if (!inside(layout.plots[i].chart, p.x, p.y)) continue;
      const f = frameAtX(axis, p.x);
      if (f.seq < 0) return null;
      const col = columns[i];
      let bin = null;
      if (axis.binned && f.binFrames > 1) {
        let mn = Infinity, mx = -Infinity, sum = 0, cnt = 0, nonFinite = false;
        for (let q = axis.first + f.i0; q < axis.first + f.i1; q++) {
          const v = store.columnValue(col.id, q);
          if (v === undefined) continue;
          if (!Number.isFinite(v)) { nonFinite = true; continue; }
          mn = Math.min(mn, v); mx = Math.max(mx, v); sum += v; cnt++;
        }
        bin = { frames: f.binFrames, min: cnt ? mn : NaN, max: cnt ? mx : NaN, mean: cnt ? sum / cnt : NaN, nonFinite };
      }
      return {
        region: 'plot', seq: f.seq, p,
        tip: plotTooltip({ column: col, frameIndex: store.frameIndexOf(f.seq), value: store.columnValue(col.id, f.seq), bin }),
      };
    }
    if (inside(layout.flame.chart, p.x, p.y)) {
      const hit = flameHitTest(layout.flame, flameEnv, p.x, p.y);
      if (!hit) return null;
      const threadName = store.decls.threadName(hit.lane.threadId);
      let tip;
      if (hit.kind === 'span') {
        const row = hit.row, k = hit.k;
        const siteId = row.site[k];
        const start = row.start[k];
        let frameIndex;
        for (const f of flameEnv.model.frames) if (start >= f.start && start < f.end) { frameIndex = store.frameIndexOf(f.seq); break; }
        tip = spanTooltip({
          site: store.decls.sites.get(siteId), siteId, durNs: row.dur[k], selfNs: row.self[k],
          threadName, depth: hit.depth, frameIndex: flameEnv.model.frames.length > 1 ? frameIndex : undefined,
        });
      } else {
        tip = bucketTooltip({
          count: hit.count, busyNs: hit.busy, startNs: hit.start, endNs: hit.end,
          dominant: store.decls.siteName(hit.site), threadName, depth: hit.depth,
        });
      }
      return { region: 'flame', seq: -1, hit, p, tip };
    }
    return null;
  }

  function updateTooltip(h) {
    if (!h || !h.tip) { if (!tooltip.hidden) tooltip.hidden = true; return; }
    const { title, rows, note } = h.tip;
    tooltip.replaceChildren();
    const t = el(doc, 'div', 'vor-tt-title');
    t.textContent = title;
    const table = el(doc, 'table');
    for (const [k, v] of rows) {
      const tr = el(doc, 'tr');
      const a = el(doc, 'td'); a.textContent = k;
      const b2 = el(doc, 'td'); b2.textContent = v;
      tr.append(a, b2);
      table.append(tr);
    }
    tooltip.append(t, table);
    if (note) { const n = el(doc, 'div', 'vor-tt-note'); n.textContent = note; tooltip.append(n); }
    tooltip.hidden = false;
    const vw = win.innerWidth, vh = win.innerHeight;
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = h.p.clientX + 14, y = h.p.clientY + 16;
    if (x + tw > vw - 4) x = Math.max(4, h.p.clientX - tw - 14);
    if (y + th > vh - 4) y = Math.max(4, h.p.clientY - th - 12);
    tooltip.style.left = `${x}px`;
    tooltip.style.top = `${y}px`;
  }

  let toolbarText = '';
  // The clock chip: the step scopes were timed with (amber at 100 µs and above, where most short
  // scopes measure 0), and in a browser whether the page was cross-origin isolated.
  function clockChipContent(clock) {
    if (!clock) return { text: '', title: '', coarse: false };
    const us = clock.resolutionNs / 1000;
    const step = us >= 1 ? `${+us.toPrecision(3)} µs` : `${clock.resolutionNs} ns`;
    const coarse = clock.resolutionNs >= 100000;
    let title = `Scopes were timed with ${clock.source || 'a clock'} in ${step} steps: shorter ones measure 0 or one step.`;
    if (clock.crossOriginIsolated === false) {
      title += ' The page was not cross-origin isolated; served with "Cross-Origin-Opener-Policy: same-origin" and ' +
        '"Cross-Origin-Embedder-Policy: require-corp" it gets 5 µs steps (vor README, Timer resolution).';
    } else if (clock.crossOriginIsolated === true) {
      title += ' The page was cross-origin isolated.';
    }
    return { text: `clock ${step}`, title, coarse };
  }

  function updateToolbar(a, b) {
    pauseBtn.textContent = state.paused ? '▶ Resume' : '❚❚ Pause';
    pauseBtn.dataset.paused = String(state.paused);
    // overhead chip: mean profiler cost per frame over the frames in view, and its share of frame time
    let sumOh = 0, sumDur = 0, nOh = 0;
    const oh = store.overheadSeries(a, b);
    const du = store.durationSeries(a, b);
    for (let i = 0; i < oh.length; i++) if (oh[i] > 0) { sumOh += oh[i]; sumDur += du[i]; nOh++; }
    let chipText, chipTitle;
    if (nOh > 0) {
      chipText = `vor ${formatNs(sumOh / nOh)}/frame · ${sumDur > 0 ? ((100 * sumOh) / sumDur).toFixed(2) : '0'}%`;
      chipTitle = `The profiler's own cost per frame: mean over the ${nOh} frames in view that report it, ` +
        `and its share of their frame time. Click to ${state.showOverhead ? 'hide' : 'show'} it on the bars.`;
    } else {
      chipText = 'vor overhead: not reported';
      chipTitle = 'No frame in view reports the profiler\'s own cost (overhead_ns = 0 means unknown).';
    }
    const rej = rejected ? ` · ${rejected} rejected` : '';
    const hidden = store.hiddenColumns();
    const hiddenText = hidden ? ` · ${hidden.toLocaleString('en-US')} more metrics not plotted` : '';
    const statsText = `${store.size.toLocaleString('en-US')}/${store.capacity.toLocaleString('en-US')} frames · ` +
      `${store.totalScopes.toLocaleString('en-US')} scopes${rej}${hiddenText}`;
    const clock = clockChipContent(store.decls.clock);
    const key = chipText + statsText + state.paused + state.showOverhead + clock.text;
    if (key === toolbarText) return;
    toolbarText = key;
    clockChip.hidden = !clock.text;
    clockChip.textContent = clock.text;
    clockChip.title = clock.title;
    clockChip.dataset.coarse = String(clock.coarse);
    chip.textContent = chipText;
    chip.title = chipTitle;
    chip.setAttribute('aria-pressed', String(state.showOverhead));
    stats.textContent = statsText;
    stats.title = (rejected ? `Last rejected frame view: ${lastReject}` : 'Frames held in the bounded history, and scopes held in memory') +
      (hidden ? `. At most ${MAX_PLOT_COLUMNS} metric columns are plotted (system columns first, then in declaration order); the values of the other ${hidden.toLocaleString('en-US')} are not kept.` : '');
  }

  // ---- actions
  function pause() {
    if (!state.paused) { state.paused = true; state.frozenEnd = store.end; }
    requestDraw();
  }
  function resume() {
    state.paused = false; state.range = null; state.pinned = -1; state.flameRel = null; state.dragSel = null;
    requestDraw();
  }
  function pinSeq(seq) {
    if (!store.has(seq)) return;
    pause();
    if (seq !== state.pinned) { state.pinned = seq; state.flameRel = state.range ? pinnedRel(seq) : null; state.scrollY = 0; }
    requestDraw();
  }
  function pinnedRel(seq) {
    // inside a range, pinning a frame zooms the flame chart to that frame (relative to the range home)
    const a = Math.max(state.range[0], store.first);
    const base = store.frameStart(a);
    const s = store.frameStart(seq) - base;
    return [s, s + Math.max(store.frameDuration(seq), 1)];
  }
  function zoomRange(a, b) {
    a = Math.max(a, store.first); b = Math.min(b, store.end);
    if (b <= a) return;
    pause();
    state.range = [a, b];
    state.pinned = store.slowestIn(a, b);
    state.flameRel = null;
    requestDraw();
  }

  const ctl = {
    regionAt(x, y) {
      const L = frame && frame.layout;
      if (!L) return null;
      if (inside(L.bars.chart, x, y)) return 'bars';
      for (const p of L.plots) if (inside(p.chart, x, y)) return 'plot';
      if (inside(L.flame.chart, x, y)) return 'flame';
      return null;
    },
    pin(x) {
      if (!frame) return;
      const f = frameAtX(frame.axis, x);
      if (f.seq >= 0) pinSeq(f.seq);
    },
    selectPreview(x0, x1) { state.dragSel = [x0, x1]; requestDraw(); },
    selectCommit(x0, x1) {
      state.dragSel = null;
      if (!frame) return;
      const ax = frame.axis;
      const a = ax.seqNear(Math.min(x0, x1)), b = ax.seqNear(Math.max(x0, x1));
      if (a >= 0 && b >= a) zoomRange(a, b + 1);
    },
    selectCancel() { state.dragSel = null; requestDraw(); },
    resetRange() { if (state.range) { state.range = null; state.flameRel = null; requestDraw(); } },
    flamePan(dx, dy) {
      if (!frame || !frame.home) return;
      const fe = frame.flameEnv;
      const w = frame.layout.flame.chart.w;
      const dt = -dx * (fe.t1 - fe.t0) / w;
      const [n0, n1] = panWindow(fe.t0, fe.t1, dt, frame.home);
      state.flameRel = [n0 - frame.home[0], n1 - frame.home[0]];
      state.scrollY = Math.max(0, Math.min(frame.maxScroll, state.scrollY - dy));
      requestDraw();
    },
    flameZoom(x, factor) {
      if (!frame || !frame.home) return;
      const fe = frame.flameEnv;
      const c = frame.layout.flame.chart;
      const anchor = fe.t0 + ((x - c.x) / c.w) * (fe.t1 - fe.t0);
      const [n0, n1] = zoomWindow(fe.t0, fe.t1, anchor, factor, { minSpan: 20, bounds: frame.home });
      state.flameRel = [n0 - frame.home[0], n1 - frame.home[0]];
      requestDraw();
    },
    flameReset() { state.flameRel = null; state.scrollY = 0; requestDraw(); },
    hover(x, y, clientX, clientY) { state.pointer = { x, y, clientX, clientY }; requestDraw(); },
    leave() { if (state.pointer) { state.pointer = null; requestDraw(); } },
    togglePause() { if (state.paused) resume(); else pause(); },
    resume,
    requestDraw,
  };

  const keyTarget = options.keyboardTarget ?? root;
  const detachInput = attachInput(canvas, keyTarget, ctl, root);
  pauseBtn.addEventListener('click', () => ctl.togglePause());
  chip.addEventListener('click', () => { state.showOverhead = !state.showOverhead; requestDraw(); });
  budgetInput.addEventListener('change', () => {
    const v = Number(budgetInput.value);
    if (v > 0 && Number.isFinite(v)) { state.budgetMs = v; requestDraw(); } else budgetInput.value = String(state.budgetMs);
  });
  const ro = new win.ResizeObserver(() => requestDraw());
  ro.observe(scroll);
  const onScroll = () => requestDraw(); // plots scrolled into view are drawn
  scroll.addEventListener('scroll', onScroll, { passive: true });
  // devicePixelRatio changes (zoom, moving to another screen) need a resize and a cleared text cache
  let dprQuery = null;
  const watchDpr = () => {
    dprQuery = win.matchMedia(`(resolution: ${win.devicePixelRatio}dppx)`);
    dprQuery.addEventListener('change', onDpr, { once: true });
  };
  const onDpr = () => { requestDraw(); watchDpr(); };
  watchDpr();

  // ---- data in
  function pushDeclarations(json) {
    const d = typeof json === 'string' ? JSON.parse(json) : json;
    store.decls.apply(d);
    siteColors.clear(); // a site declared late may have been coloured by id
    if (d && Array.isArray(d.threads) && d.threads.length) flameCache.key = ''; // lane order may change
    requestDraw();
  }

  function pushFrame(bytes) {
    try {
      store.pushBytes(bytes);
    } catch (err) {
      rejected++;
      if (rejected === 1 || rejected % 1000 === 0) console.warn(`vor panel: frame view rejected (${rejected} so far): ${err.message}`);
      lastReject = err.message;
      requestDraw();
      return false;
    }
    // while paused the canvas only changes when the frozen view loses frames to eviction
    if (!state.paused || (frame && store.first > frame.axis.first)) requestDraw();
    else if (!rafId) rafId = win.requestAnimationFrame(() => { rafId = 0; if (dirty) draw(); else { const [a, b] = viewRange(); updateToolbar(a, b); } });
    return true;
  }

  function setStatus(text, kind = 'info') {
    status.textContent = text;
    status.title = text;
    status.dataset.kind = kind;
  }

  /** Shows a centred notice (title, paragraphs of text) over the panel, or hides it (null). */
  function setNotice(content) {
    if (!content) { notice.hidden = true; notice.replaceChildren(); return; }
    notice.replaceChildren();
    const h = el(doc, 'h2'); h.textContent = content.title;
    notice.append(h);
    for (const line of content.lines ?? []) { const p = el(doc, 'p'); p.textContent = line; notice.append(p); }
    notice.hidden = false;
  }

  function clear() {
    store.clear();
    siteColors.clear();
    flameCache = { key: '', model: null, lanes: null };
    rejected = 0;
    state.range = null; state.pinned = -1; state.flameRel = null; state.frozenEnd = 0; state.scrollY = 0;
    requestDraw();
  }

  function destroy() {
    destroyed = true;
    if (rafId) win.cancelAnimationFrame(rafId);
    detachInput();
    ro.disconnect();
    scroll.removeEventListener('scroll', onScroll);
    dprQuery?.removeEventListener('change', onDpr);
    root.remove();
  }

  requestDraw();

  return {
    /** Merges a declarations object (or JSON text): {columns, sites, threads}. */
    pushDeclarations,
    /** Parses and stores one frame view (ArrayBuffer/Uint8Array, copied). Returns false if rejected. */
    pushFrame,
    /** Drops all frames and declarations (e.g. before opening another capture). */
    clear,
    setStatus,
    setNotice,
    /** Element in the toolbar where a page puts its source controls (capture picker, file button). */
    sourceSlot,
    root,
    canvas,
    pause,
    resume,
    togglePause: () => ctl.togglePause(),
    isPaused: () => state.paused,
    setBudget(ms) { if (ms > 0) { state.budgetMs = ms; budgetInput.value = String(ms); requestDraw(); } },
    /** Pins a frame by its frame_index (as the C side numbered it); returns false if not held. */
    pinFrameIndex(index) {
      for (let q = store.end - 1; q >= store.first; q--) if (store.frameIndexOf(q) === index) { pinSeq(q); return true; }
      return false;
    },
    /** Zooms every graph to frames whose frame_index is in [i0, i1]. */
    zoomFrameIndexRange(i0, i1) {
      let a = -1, b = -1;
      for (let q = store.first; q < store.end; q++) {
        const fi = store.frameIndexOf(q);
        if (fi >= i0 && a < 0) a = q;
        if (fi <= i1) b = q;
      }
      if (a >= 0 && b >= a) zoomRange(a, b + 1);
    },
    /** x (canvas CSS px) of the centre of frame `index` on the shared frame axis, or null if not in view. */
    xOfFrameIndex(index) {
      if (!frame) return null;
      const ax = frame.axis;
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
    regions: () => (frame ? frame.layout : null),
    /** A snapshot of the view state, for tests and embedding pages. */
    viewState() {
      const fe = frame ? frame.flameEnv : null;
      return {
        paused: state.paused,
        pinnedFrameIndex: state.pinned >= 0 && store.has(state.pinned) ? store.frameIndexOf(state.pinned) : null,
        range: state.range ? [store.frameIndexOf(state.range[0]), store.frameIndexOf(state.range[1] - 1)] : null,
        framesInView: frame ? frame.axis.n : 0,
        flameWindowNs: fe && fe.t1 > fe.t0 ? [fe.t0, fe.t1] : null,
        flameScopes: fe && fe.model ? fe.model.nScopes : 0,
        flameStats: frame ? frame.flameStats : null,
        frames: store.size,
        scopes: store.totalScopes,
        rejected,
        plots: frame ? frame.columns.length : 0,
        plotsDrawn,
        hiddenColumns: store.hiddenColumns(),
        lastDrawMs,
        drawCount,
        tooltip: tooltip.hidden ? null : tooltip.innerText,
      };
    },
    store,
    destroy,
  };
}
