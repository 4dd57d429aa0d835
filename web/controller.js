// @ts-check
// The controller input.js drives: turns gestures in canvas pixels into view-model actions, through
// the geometry of the last draw (its layout, frame axis and flame window), so a click means the
// frame that was drawn under it. Pure apart from calling the model; before the first draw every
// gesture but pause/resume is ignored.

import { inside } from './layout.js';
import { frameAtX } from './hover.js';
import { nearestScopeSeq } from './flame_selection.js';

/** @typedef {import('./view_model.js').ViewModel} ViewModel */
/** @typedef {import('./scene.js').Scene} Scene */
/** @typedef {'bars' | 'plot' | 'flame'} Region */
/**
 * The actions input.js calls (see its header).
 * @typedef {object} PanelController
 * @property {(x: number, y: number) => Region | null} regionAt
 * @property {(x: number) => void} pin
 * @property {(x0: number, x1: number) => void} selectPreview
 * @property {(x0: number, x1: number) => void} selectCommit
 * @property {() => void} selectCancel
 * @property {() => void} resetRange
 * @property {(dx: number, dy: number) => void} flamePan
 * @property {(x: number, factor: number) => void} flameZoom
 * @property {() => void} flameReset
 * @property {(x: number, y: number, clientX: number, clientY: number) => void} hover
 * @property {() => void} leave
 * @property {() => void} togglePause
 * @property {() => void} resume
 * @property {() => void} requestDraw
 */

/**
 * The flame geometry of a scene that wheel and drag act on, or null when it shows no window.
 * @param {Scene} scene
 */
function flameGeometry(scene) {
  const f = scene.flame;
  return f.home ? { t0: f.t0, t1: f.t1, home: f.home, maxScroll: f.maxScroll, chart: scene.layout.flame.chart } : null;
}

/**
 * @param {ViewModel} model
 * @param {() => Scene | null} lastScene   the scene of the last draw
 * @param {() => void} requestDraw
 * @returns {PanelController}
 */
export function createController(model, lastScene, requestDraw) {
  return {
    regionAt(x, y) {
      const scene = lastScene();
      if (!scene) return null;
      const L = scene.layout;
      if (inside(L.bars.chart, x, y)) return 'bars';
      for (const p of L.plots) if (inside(p.chart, x, y)) return 'plot';
      if (inside(L.flame.chart, x, y)) return 'flame';
      return null;
    },
    pin(x) {
      const scene = lastScene();
      if (!scene) return;
      const f = frameAtX(model.store, scene.view.axis, x);
      // snaps to the nearest frame with scopes (a flame frame), when the view has one
      if (f.seq >= 0) model.pinSeq(nearestScopeSeq(model.store, f.seq, scene.view.axis.first, scene.view.axis.end));
    },
    selectPreview(x0, x1) { model.setDragSelection([x0, x1]); },
    selectCommit(x0, x1) {
      model.setDragSelection(null);
      const scene = lastScene();
      if (!scene) return;
      const ax = scene.view.axis;
      const a = ax.seqNear(Math.min(x0, x1)), b = ax.seqNear(Math.max(x0, x1));
      if (a >= 0 && b >= a) model.zoomRange(a, b + 1);
    },
    selectCancel() { model.setDragSelection(null); },
    resetRange() { model.resetRange(); },
    flamePan(dx, dy) {
      const scene = lastScene();
      const g = scene && flameGeometry(scene);
      if (!g) return;
      model.panFlame(g, -dx * (g.t1 - g.t0) / g.chart.w, dy);
    },
    flameZoom(x, factor) {
      const scene = lastScene();
      const g = scene && flameGeometry(scene);
      if (!g) return;
      model.zoomFlame(g, g.t0 + ((x - g.chart.x) / g.chart.w) * (g.t1 - g.t0), factor);
    },
    flameReset() { model.resetFlame(); },
    hover(x, y, clientX, clientY) { model.setPointer({ x, y, clientX, clientY }); },
    leave() { model.clearPointer(); },
    togglePause() { model.togglePause(); },
    resume() { model.resume(); },
    requestDraw,
  };
}
