// @ts-check
// Draws a scene (scene.js) onto the panel's canvas: background, frame bars, the plots inside the
// scrolled viewport, the flame chart, then the shared overlays. Reads the scene and the store and
// writes pixels; the only state it touches is its own scratch (bins, rectangle batches, line
// points, flame items), kept across draws so a redraw allocates no large arrays.

import { THEME } from '../colors.js';
import { drawBars } from './bars.js';
import { drawPlot } from './plots.js';
import { drawFlame } from './flame.js';
import { drawSharedOverlays } from './overlays.js';

/** @typedef {import('../scene.js').Scene} Scene */
/** @typedef {import('../store.js').FrameStore} FrameStore */
/**
 * What drawing needs besides the scene: the data, scratch kept across draws, text measurement.
 * @typedef {object} DrawResources
 * @property {FrameStore} store
 * @property {number} dpr                                   canvas backing ratio
 * @property {ReturnType<typeof import('../binning.js').createBins>} bins
 * @property {import('./batch.js').RectBatches} batches
 * @property {ReturnType<typeof import('./plots.js').createLinePoints>} linePoints
 * @property {ReturnType<typeof import('./flame.js').createFlameScratch>} flameScratch
 * @property {import('../text.js').TextMeasurer} measurer
 * @property {(siteId: number) => number} colorOf          palette index of a site
 */
/**
 * @typedef {object} DrawResult
 * @property {number} plotsDrawn
 * @property {ReturnType<typeof drawFlame>} flameStats     rectangles, spans and merged buckets drawn
 */

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {Scene} scene
 * @param {DrawResources} res
 * @returns {DrawResult}
 */
export function drawPanel(ctx, scene, res) {
  const { layout, view } = scene;
  const { dpr } = res;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = THEME.background;
  ctx.fillRect(0, 0, scene.width, scene.height);

  const env = { store: res.store, view, bins: res.bins, batches: res.batches, measurer: res.measurer, dpr, linePoints: res.linePoints };
  drawBars(ctx, layout.bars, env);
  let plotsDrawn = 0;
  for (let i = 0; i < scene.columns.length; i++) {
    if (!scene.plotVisible[i]) continue;
    plotsDrawn++;
    drawPlot(ctx, layout.plots[i], scene.columns[i], i, env);
  }
  const hover = scene.hover;
  const flameStats = drawFlame(ctx, layout.flame, {
    ...scene.flame, decls: res.store.decls, colorOf: res.colorOf, measurer: res.measurer, batches: res.batches,
    scratch: res.flameScratch, dpr, hover: hover && hover.region === 'flame' && hover.hit ? hover.hit : null,
  });
  drawSharedOverlays(ctx, scene);
  return { plotsDrawn, flameStats };
}
