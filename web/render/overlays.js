// @ts-check
// Overlays across the bars and every plot, the shared frame axis made visible: a faint column under
// the hovered frame, and the pinned frame's band, dashed line and marker. Drawn last, over the
// bars and plots. Reads the scene, writes pixels only.

import { THEME } from '../colors.js';

/** @typedef {import('../scene.js').Scene} Scene */

/**
 * @param {CanvasRenderingContext2D} ctx
 * @param {Scene} scene
 */
export function drawSharedOverlays(ctx, scene) {
  const { layout, view: { axis, pinned }, hover } = scene;
  const nPlots = scene.columns.length;
  const top = layout.bars.chart.y;
  const bottom = nPlots ? layout.plots[nPlots - 1].y + layout.plots[nPlots - 1].h : layout.bars.chart.y + layout.bars.chart.h;
  /** @param {number} seq @param {string} style @param {number} width */
  const column = (seq, style, width) => {
    if (seq < axis.first || seq >= axis.end) return;
    const x0 = axis.xOf(seq);
    const w = Math.max(width, axis.slot);
    ctx.fillStyle = style;
    ctx.fillRect(Math.round(x0 + axis.slot / 2 - w / 2), top, w, bottom - top);
  };
  if (hover && hover.seq >= 0 && hover.seq !== pinned) column(hover.seq, 'rgba(255,255,255,0.07)', 1);
  if (pinned < 0) return;
  column(pinned, 'rgba(242,244,248,0.16)', 3);
  if (pinned < axis.first || pinned >= axis.end) return;
  const x = Math.round(axis.xCenter(pinned)) + 0.5;
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
