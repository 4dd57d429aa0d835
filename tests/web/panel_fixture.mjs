// Small stores for the view-model tests (view_model, scene, hover, toolbar, controller): frames with
// known times, metric values and scopes, built through the real parser and store, so the tests read
// frames, times and tooltips they can state exactly.
//
//   const store = makeStore([{ ms: 10 }, { ms: 40, scopes: true }, { ms: 12, loss: NaN }], { capacity: 8 });
//   frame i: frame_index 100 + i, starts at i * 20 ms, lasts `ms`, overhead_ns `overheadNs` (0 = unknown)

import { FrameStore } from '../../web/store.js';
import { parseFrameView } from '../../web/frame_view.js';
import { encodeFrameView } from './frame_view_encoder.mjs';

export const FRAME_STEP_NS = 20e6;
export const FIRST_INDEX = 100;
export const DECLARATIONS = {
  columns: [
    { id: 0, name: 'frame_ms', unit: 'ms', system: true },
    { id: 1, name: 'memory_mb', unit: 'MB', system: true },
    { id: 9, name: 'loss', unit: '' },
  ],
  sites: [
    { id: 1, name: 'frame', function: 'frame', file: 'main.c', line: 40 },
    { id: 2, name: 'update', function: 'update', file: 'game.c', line: 12 },
  ],
  threads: [{ id: 0, name: 'main' }, { id: 1, name: 'render' }],
};

/**
 * Frame i's view bytes. spec: { ms = 10, overheadNs = 0, loss, memory = 100, scopes: bool, dropped = 0 }.
 * With scopes: on thread 0 a `frame` scope over the whole frame with one `update` child over its first
 * half (child first: end order).
 */
export function frameBytes(i, spec = {}) {
  const ms = spec.ms ?? 10;
  const start = i * FRAME_STEP_NS;
  const dur = ms * 1e6;
  const values = [[0, ms], [1, spec.memory ?? 100]];
  if ('loss' in spec) values.push([9, spec.loss]);
  return encodeFrameView({
    frameIndex: FIRST_INDEX + i, startNs: start, durationNs: dur, overheadNs: spec.overheadNs ?? 0,
    droppedScopes: spec.dropped ?? 0, values,
    threads: spec.scopes ? [{ id: 0, scopes: [{ start, dur: dur / 2, site: 2, depth: 1 }, { start, dur, site: 1, depth: 0 }] }] : [],
  });
}

/** A store holding `frames` (specs as for frameBytes) after DECLARATIONS. options: FrameStore's. */
export function makeStore(frames, options = {}) {
  const store = new FrameStore(options);
  store.decls.apply(DECLARATIONS);
  frames.forEach((spec, i) => store.push(parseFrameView(frameBytes(i, spec))));
  return store;
}

/** Appends more frames (continuing the numbering). */
export function pushFrames(store, specs) {
  for (const spec of specs) store.push(parseFrameView(frameBytes(store.end, spec)));
}
