// @ts-check
// The panel's one animation-frame path: at most one callback per frame, whatever asked for it.
// request('draw') marks the canvas dirty (a full draw, which also writes the toolbar);
// request('toolbar') asks for the toolbar alone (frames stored while the panel is paused change
// its counts, not the canvas). A synchronous draw in between (panel.draw()) calls drawn(), so the
// frame's callback does not draw again.

/**
 * @typedef {object} FrameLoop
 * @property {(what?: 'draw' | 'toolbar') => void} request
 * @property {() => void} drawn     a draw just happened: nothing is dirty
 * @property {() => boolean} pending  a callback is scheduled
 * @property {() => void} stop      cancels the callback; later requests are ignored
 */

/**
 * @param {Pick<Window, 'requestAnimationFrame' | 'cancelAnimationFrame'>} win
 * @param {{draw: () => void, toolbar: () => void}} callbacks
 * @returns {FrameLoop}
 */
export function createFrameLoop(win, { draw, toolbar }) {
  let rafId = 0;
  let dirty = false;
  let toolbarDirty = false;
  let stopped = false;
  const run = () => {
    rafId = 0;
    const redraw = dirty, text = toolbarDirty;
    dirty = false;
    toolbarDirty = false;
    if (redraw) draw();
    else if (text) toolbar();
  };
  return {
    request(what = 'draw') {
      if (what === 'draw') dirty = true; else toolbarDirty = true;
      if (rafId || stopped) return;
      rafId = win.requestAnimationFrame(run);
    },
    drawn() { dirty = false; toolbarDirty = false; },
    pending: () => rafId !== 0,
    stop() {
      stopped = true;
      if (rafId) win.cancelAnimationFrame(rafId);
      rafId = 0;
    },
  };
}
