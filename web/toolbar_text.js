// @ts-check
// The toolbar's words: the pause button, the overhead chip (the profiler's mean cost per frame over
// the frames in view, and its share of their frame time), the clock chip (the step scopes were
// timed with; amber at 100 µs and above, where most short scopes measure 0; whether the page was
// cross-origin isolated) and the history and rejection counts. Pure; panel_dom.js writes them, and
// only when `key` changed.

import { formatNs } from './axis.js';
import { MAX_PLOT_COLUMNS } from './store.js';
import { plural } from './text.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {import('./store.js').Clock} Clock */
/** @typedef {{text: string, title: string}} Labelled */
/** @typedef {{text: string, title: string, coarse: boolean}} ClockChip */
/**
 * @typedef {object} ToolbarText
 * @property {{text: string, paused: boolean}} pause
 * @property {Labelled & {pressed: boolean}} chip   the overhead chip
 * @property {ClockChip} clock                     text '' when no clock was declared (hidden)
 * @property {Labelled} stats
 * @property {string} key                          changes when the written text must change
 */

/** Clock steps from here on make most short scopes measure 0 (the chip turns amber). */
export const COARSE_CLOCK_NS = 100000;

const count = (/** @type {number} */ n) => n.toLocaleString('en-US');

/**
 * The clock chip for the declared clock (or none).
 * @param {Clock | null} clock
 * @returns {ClockChip}
 */
export function clockChipContent(clock) {
  if (!clock) return { text: '', title: '', coarse: false };
  const us = clock.resolutionNs / 1000;
  const step = us >= 1 ? `${+us.toPrecision(3)} µs` : `${clock.resolutionNs} ns`;
  const coarse = clock.resolutionNs >= COARSE_CLOCK_NS;
  let title = `Scopes were timed with ${clock.source || 'a clock'} in ${step} steps: shorter ones measure 0 or one step.`;
  if (clock.crossOriginIsolated === false) {
    title += ' The page was not cross-origin isolated; served with "Cross-Origin-Opener-Policy: same-origin" and ' +
      '"Cross-Origin-Embedder-Policy: require-corp" it gets 5 µs steps (vor README, Timer resolution).';
  } else if (clock.crossOriginIsolated === true) {
    title += ' The page was cross-origin isolated.';
  }
  return { text: `clock ${step}`, title, coarse };
}

/**
 * The overhead chip: mean profiler cost over the frames [a, b) that report it.
 * @param {FrameStore} store @param {number} a @param {number} b @param {boolean} showOverhead
 * @returns {Labelled}
 */
export function overheadChipContent(store, a, b, showOverhead) {
  let sumOh = 0, sumDur = 0, nOh = 0;
  const oh = store.overheadSeries(a, b);
  const du = store.durationSeries(a, b);
  for (let i = 0; i < oh.length; i++) if (oh[i] > 0) { sumOh += oh[i]; sumDur += du[i]; nOh++; }
  if (nOh === 0) {
    return { text: 'vor overhead: not reported', title: 'No frame in view reports the profiler\'s own cost (overhead_ns = 0 means unknown).' };
  }
  return {
    text: `vor ${formatNs(sumOh / nOh)}/frame · ${sumDur > 0 ? ((100 * sumOh) / sumDur).toFixed(2) : '0'}%`,
    title: `The profiler's own cost per frame: mean over the ${plural(nOh, 'frame')} in view that report it, ` +
      `and its share of their frame time. Click to ${showOverhead ? 'hide' : 'show'} it on the bars.`,
  };
}

/**
 * Everything the toolbar shows for the frames [a, b) in view.
 * @param {object} args
 * @param {FrameStore} args.store
 * @param {number} args.a
 * @param {number} args.b
 * @param {boolean} args.paused
 * @param {boolean} args.showOverhead
 * @param {number} args.rejected      frame views rejected so far
 * @param {string} args.lastReject    why the last one was
 * @param {number} [args.captureFrames] frames in the whole capture as far as known (the overview), 0: unknown
 * @param {number} [args.skipped]       frames not kept while the view was frozen
 * @returns {ToolbarText}
 */
export function toolbarText({ store, a, b, paused, showOverhead, rejected, lastReject, captureFrames = 0, skipped = 0 }) {
  const chip = overheadChipContent(store, a, b, showOverhead);
  const rej = rejected ? ` · ${rejected} rejected` : '';
  const hidden = store.hiddenColumns();
  const hiddenText = hidden ? ` · ${plural(hidden, 'more metric')} not plotted` : '';
  const whole = captureFrames > store.size;
  const first = store.size ? store.frameIndexOf(store.first) : 0, last = store.size ? store.frameIndexOf(store.end - 1) : 0;
  const framesText = whole ? `frames #${count(first)}–#${count(last)} of ${count(captureFrames)}` : plural(store.size, 'frame');
  const skippedText = skipped ? ` · ${plural(skipped, 'frame')} arrived while paused` : '';
  const statsText = `${framesText} · ${plural(store.totalScopes, 'scope')}${rej}${skippedText}${hiddenText}`;
  const statsTitle = (rejected ? `Last rejected frame view: ${lastReject}` : `The view holds ${plural(store.size, 'frame')} (at most ${count(store.capacity)}) ` +
    `of the ${plural(Math.max(captureFrames, store.size), 'frame')} seen; the strip above shows them all` +
    (skipped ? `; paused, the ${plural(skipped, 'frame')} that arrived were not kept so that none on screen left (the strip counts them)` : '')) +
    (hidden ? `. At most ${MAX_PLOT_COLUMNS} metric columns are plotted (system columns first, then in declaration order); the values of the other ${count(hidden)} are not kept.` : '');
  const clock = clockChipContent(store.decls.clock);
  return {
    pause: { text: paused ? '▶ Resume' : '❚❚ Pause', paused },
    chip: { ...chip, pressed: showOverhead },
    clock,
    stats: { text: statsText, title: statsTitle },
    key: chip.text + statsText + paused + showOverhead + clock.text,
  };
}
