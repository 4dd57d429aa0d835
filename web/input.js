// @ts-check
// Input handling: turns pointer, wheel and keyboard events on the panel canvas into panel actions.
// It knows gestures (click vs drag, shift-drag, wheel steps), not data: every decision about frames and
// times is made by the controller the panel passes in:
//   regionAt(x, y) -> 'bars' | 'plot' | 'flame' | null      (canvas CSS px)
//   pin(x)                     click on the bars or a plot: pin the frame at x and pause
//   selectPreview(x0, x1)      shift-drag on the bars in progress
//   selectCommit(x0, x1)       shift-drag released: zoom every graph to that frame range
//   selectCancel()
//   resetRange()               double-click on the bars or a plot: show all frames again
//   flamePan(dx, dy)           drag on the flame chart (pixels)
//   flameZoom(x, factor)       wheel over the flame chart (factor < 1 zooms in), anchored at x
//   flameReset()               double-click on the flame chart
//   hover(x, y, clientX, clientY) / leave()
//   togglePause(), resume()    space bar, Escape
//   requestDraw()

/** @typedef {import('./controller.js').PanelController} PanelController */
/** @typedef {import('./controller.js').Region} Region */
/**
 * Where keydown is listened for: the panel root or the document.
 * @typedef {{
 *   addEventListener(type: 'keydown', listener: (e: KeyboardEvent) => void): void,
 *   removeEventListener(type: 'keydown', listener: (e: KeyboardEvent) => void): void,
 * }} KeyTarget
 */
/**
 * A pointer gesture in progress.
 * @typedef {{kind: 'click' | 'select' | 'pan', region: Region, x0: number, y0: number, lastX: number,
 *   lastY: number, id: number, moved: boolean}} Gesture
 */

export const DRAG_THRESHOLD_PX = 3;

/**
 * Zoom factor for one wheel event: about 1.2x per mouse-wheel notch, smooth for trackpads.
 * @param {number} deltaY @param {number} [deltaMode]
 */
export function wheelZoomFactor(deltaY, deltaMode = 0) {
  const px = deltaMode === 1 ? deltaY * 33 : deltaMode === 2 ? deltaY * 400 : deltaY;
  const clamped = Math.max(-300, Math.min(300, px));
  return Math.exp(clamped * 0.0018);
}

// Keys typed into a form control belong to it; a focused button handles space itself (it clicks).
/** @param {EventTarget | null} target @param {string} key */
function ownsKey(target, key) {
  const t = /** @type {HTMLElement | null} */ (target);
  if (!t || !t.tagName) return false;
  const tag = t.tagName.toLowerCase();
  if (tag === 'button') return key === ' ' || key === 'Enter';
  return tag === 'input' || tag === 'textarea' || tag === 'select' || t.isContentEditable;
}

/**
 * Attaches listeners; returns detach(). keyTarget receives keydown (the panel root or the document);
 * focusTarget (optional) is focused on pointerdown so an embedded panel gets the keys after a click.
 * @param {HTMLCanvasElement} canvas @param {KeyTarget} keyTarget @param {PanelController} ctl
 * @param {HTMLElement | null} [focusTarget]
 * @returns {() => void}
 */
export function attachInput(canvas, keyTarget, ctl, focusTarget = null) {
  /** @type {Gesture | null} */
  let gesture = null;

  /** @param {MouseEvent} e @returns {[number, number]} */
  const pos = (e) => {
    const r = canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };

  /** @param {PointerEvent} e */
  const onDown = (e) => {
    if (e.button !== 0) return;
    const [x, y] = pos(e);
    const region = ctl.regionAt(x, y);
    if (!region) return;
    focusTarget?.focus?.({ preventScroll: true });
    const kind = region === 'flame' ? 'pan' : e.shiftKey && region === 'bars' ? 'select' : 'click';
    gesture = { kind, region, x0: x, y0: y, lastX: x, lastY: y, id: e.pointerId, moved: false };
    canvas.setPointerCapture?.(e.pointerId);
    if (kind === 'pan') canvas.style.cursor = 'grabbing';
    e.preventDefault();
  };

  /** @param {PointerEvent} e */
  const onMove = (e) => {
    const [x, y] = pos(e);
    if (!gesture) { ctl.hover(x, y, e.clientX, e.clientY); return; }
    if (Math.abs(x - gesture.x0) > DRAG_THRESHOLD_PX || Math.abs(y - gesture.y0) > DRAG_THRESHOLD_PX) gesture.moved = true;
    if (gesture.kind === 'select' && gesture.moved) ctl.selectPreview(gesture.x0, x);
    else if (gesture.kind === 'pan' && gesture.moved) {
      ctl.flamePan(x - gesture.lastX, y - gesture.lastY);
      ctl.leave();
    }
    gesture.lastX = x;
    gesture.lastY = y;
  };

  /** @param {PointerEvent} e */
  const onUp = (e) => {
    if (!gesture) return;
    const [x, y] = pos(e);
    const g = gesture;
    gesture = null;
    canvas.releasePointerCapture?.(e.pointerId);
    canvas.style.cursor = '';
    if (g.kind === 'select') {
      if (g.moved) ctl.selectCommit(g.x0, x);
      else { ctl.selectCancel(); ctl.pin(x); }
    } else if (g.kind === 'click' && !g.moved) ctl.pin(x);
    ctl.hover(x, y, e.clientX, e.clientY);
  };

  const onCancel = () => {
    if (gesture && gesture.kind === 'select') ctl.selectCancel();
    gesture = null;
    canvas.style.cursor = '';
  };

  /** @param {WheelEvent} e */
  const onWheel = (e) => {
    const [x, y] = pos(e);
    if (ctl.regionAt(x, y) !== 'flame') return;
    e.preventDefault();
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) ctl.flamePan(-e.deltaX, 0);
    else ctl.flameZoom(x, wheelZoomFactor(e.deltaY, e.deltaMode));
  };

  /** @param {MouseEvent} e */
  const onDbl = (e) => {
    const [x, y] = pos(e);
    const region = ctl.regionAt(x, y);
    if (region === 'flame') ctl.flameReset();
    else if (region === 'bars' || region === 'plot') ctl.resetRange();
  };

  /** @param {KeyboardEvent} e */
  const onKey = (e) => {
    if (ownsKey(e.target, e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.code === 'Space' || e.key === ' ') { e.preventDefault(); ctl.togglePause(); }
    else if (e.key === 'Escape') ctl.resume();
  };

  const onLeave = () => { if (!gesture) ctl.leave(); };

  canvas.addEventListener('pointerdown', onDown);
  canvas.addEventListener('pointermove', onMove);
  canvas.addEventListener('pointerup', onUp);
  canvas.addEventListener('pointercancel', onCancel);
  canvas.addEventListener('pointerleave', onLeave);
  canvas.addEventListener('wheel', onWheel, { passive: false });
  canvas.addEventListener('dblclick', onDbl);
  keyTarget.addEventListener('keydown', onKey);
  return () => {
    canvas.removeEventListener('pointerdown', onDown);
    canvas.removeEventListener('pointermove', onMove);
    canvas.removeEventListener('pointerup', onUp);
    canvas.removeEventListener('pointercancel', onCancel);
    canvas.removeEventListener('pointerleave', onLeave);
    canvas.removeEventListener('wheel', onWheel);
    canvas.removeEventListener('dblclick', onDbl);
    keyTarget.removeEventListener('keydown', onKey);
  };
}
