// @ts-check
// Tooltip contents: what hovering a flame span, a merged bucket, a frame bar or a plot shows.
// Pure functions returning {title, rows: [[label, value]], note?}; the panel writes them with
// textContent (names come from the program being profiled: never parsed as HTML).

import { formatMs, formatNs, formatValue } from './axis.js';

/** @typedef {{title: string, rows: [string, string][], note?: string}} Tooltip */

/**
 * @param {{site: import('./store.js').Site | undefined, siteId: number, durNs: number, selfNs: number,
 *   threadName: string, depth: number, frameIndex?: number}} span
 * @returns {Tooltip}
 */
export function spanTooltip({ site, siteId, durNs, selfNs, threadName, depth, frameIndex }) {
  /** @type {[string, string][]} */
  const rows = [];
  const name = site ? site.name : `site ${siteId}`;
  if (site && site.function && site.function !== site.name) rows.push(['function', site.function]);
  if (site && site.file) rows.push(['source', site.line ? `${site.file}:${site.line}` : site.file]);
  rows.push(['duration', formatNs(durNs)]);
  rows.push(['self', `${formatNs(selfNs)}${durNs > 0 ? ` (${((100 * selfNs) / durNs).toFixed(0)}%)` : ''}`]);
  rows.push(['thread', threadName]);
  rows.push(['depth', String(depth)]);
  if (frameIndex !== undefined) rows.push(['frame', `#${frameIndex}`]);
  return { title: name, rows };
}

/**
 * The untracked time under the pointer: frame time no top-level scope of the thread covers.
 * @param {{durNs: number, threadName: string, frameIndex?: number}} gap
 * @returns {Tooltip}
 */
export function untrackedTooltip({ durNs, threadName, frameIndex }) {
  /** @type {[string, string][]} */
  const rows = [['duration', formatNs(durNs)], ['thread', threadName]];
  if (frameIndex !== undefined) rows.push(['frame', `#${frameIndex}`]);
  return { title: 'untracked', rows, note: 'Frame time that no top-level scope of this thread covers: uninstrumented code, waiting or idle.' };
}

/**
 * @param {{count: number, busyNs: number, startNs: number, endNs: number, dominant: string, threadName: string, depth: number}} bucket
 * @returns {Tooltip}
 */
export function bucketTooltip({ count, busyNs, startNs, endNs, dominant, threadName, depth }) {
  return {
    title: `${count.toLocaleString('en-US')} spans merged`,
    rows: [
      ['covering', formatNs(endNs - startNs)],
      ['busy', formatNs(busyNs)],
      ['mostly', dominant],
      ['thread', threadName],
      ['depth', String(depth)],
    ],
    note: 'Narrower than a pixel: zoom in (wheel) to separate them.',
  };
}

/**
 * @param {{frameIndex: number, ms: number, budgetMs: number, overheadNs: number, nScopes: number,
 *   scopeState: 'present' | 'evicted' | 'none', binFrames: number}} frame
 * @returns {Tooltip}
 */
export function frameTooltip({ frameIndex, ms, budgetMs, overheadNs, nScopes, scopeState, binFrames }) {
  /** @type {[string, string][]} */
  const rows = [['frame time', formatMs(ms)]];
  if (ms > budgetMs) rows.push(['over budget', `+${formatMs(ms - budgetMs)}`]);
  if (overheadNs > 0) rows.push(['vor overhead', `${formatNs(overheadNs)} (${((overheadNs / 1e4) / ms).toFixed(2)}%)`]);
  rows.push(['scopes', scopeState === 'none' ? 'metrics only' : scopeState === 'evicted'
    ? `${nScopes.toLocaleString('en-US')} (released: memory bound)` : nScopes.toLocaleString('en-US')]);
  /** @type {Tooltip} */
  const t = { title: `Frame #${frameIndex}`, rows };
  if (binFrames > 1) t.note = `Slowest of ${binFrames} frames in this pixel; click to pin it.`;
  else t.note = 'Click to pin; shift-drag to zoom a range.';
  return t;
}

/**
 * @param {{column: import('./store.js').Column, frameIndex: number, value: number | undefined,
 *   bin: {frames: number, min: number, max: number, mean: number, nonFinite: boolean} | null}} plot
 * @returns {Tooltip}
 */
export function plotTooltip({ column, frameIndex, value, bin }) {
  /** @type {[string, string][]} */
  const rows = [];
  if (bin && bin.frames > 1) {
    rows.push(['frames', `${bin.frames} in this pixel`]);
    rows.push(['min', formatValue(bin.min, column.unit)]);
    rows.push(['mean', formatValue(bin.mean, column.unit)]);
    rows.push(['max', formatValue(bin.max, column.unit)]);
    if (bin.nonFinite) rows.push(['non-finite', 'yes']);
  } else {
    rows.push(['frame', `#${frameIndex}`]);
    rows.push(['value', value === undefined ? '—' : formatValue(value, column.unit)]);
  }
  return { title: column.name, rows };
}
