// @ts-check
// The analysis shown beside the flame chart: which flame frames the scope table reads (those of the
// flame chart's selection: the pinned frame, or the frames of the zoomed range that carry scopes),
// and a memo of the table (scope_table.js) per selection, compensation and declarations, so a redraw
// that shows the same frames does not read their scopes again. Pure apart from the memo.

import { SCOPES_PRESENT } from './store.js';
import { buildScopeTable } from './scope_table.js';

/** @typedef {import('./store.js').FrameStore} FrameStore */
/** @typedef {import('./flame_selection.js').FlameSelection} FlameSelection */
/** @typedef {import('./scope_table.js').ScopeTable} ScopeTable */

/**
 * The flame frames of a selection, in time order, and a label naming them.
 * @param {FrameStore} store @param {FlameSelection} sel
 */
export function selectionFrames(store, sel) {
  /** @type {{seq: number, view: import('./store.js').FrameView}[]} */
  const frames = [];
  if (sel.kind === 'none') return { frames, label: '' };
  for (let q = sel.a; q < sel.b; q++) {
    if (store.scopesState(q) !== SCOPES_PRESENT) continue;
    const view = store.scopes(q);
    if (view) frames.push({ seq: q, view });
  }
  const fi = (/** @type {number} */ q) => `#${store.frameIndexOf(q)}`;
  const label = sel.kind === 'frame' ? `frame ${fi(sel.a)}` : `frames ${fi(sel.a)}–${fi(sel.b - 1)}`;
  return { frames, label };
}

export class ScopeTableCache {
  constructor() {
    this.key = '';
    /** @type {ScopeTable | null} */
    this.table = null;
    this.label = '';
  }

  /**
   * The table of the selection (memoised).
   * @param {FrameStore} store @param {FlameSelection} sel @param {boolean} compensate
   */
  get(store, sel, compensate) {
    const key = `${sel.key}|${compensate}|${store.decls.version}`;
    if (key !== this.key || !this.table) {
      const { frames, label } = selectionFrames(store, sel);
      this.table = buildScopeTable(frames, store.decls, { compensate });
      this.label = label;
      this.key = key;
    }
    return { table: this.table, label: this.label };
  }

  clear() { this.key = ''; this.table = null; this.label = ''; }
}
