// @ts-check
// URL state: the part of a view worth sharing as a link, next to `capture=<id>` in the page's query:
// `range=A-B` (zoomed frames, by frame_index), `pin=N` (pinned frame_index), `search=text` and
// `table=1` (the scope table open). Pure: URLSearchParams in and out; main.js applies what it reads
// once the capture is open and writes the view back as it changes (history.replaceState).

/** @typedef {{range: [number, number] | null, pin: number | null, search: string, table: boolean}} UrlView */

const frameNumber = (/** @type {string | null} */ s) => (s !== null && /^\d{1,15}$/.test(s) ? Number(s) : null);

/**
 * What `params` asks to show; malformed values are ignored (null / '' / false).
 * @param {URLSearchParams} params
 * @returns {UrlView}
 */
export function readUrlView(params) {
  const r = /^(\d{1,15})-(\d{1,15})$/.exec(params.get('range') ?? '');
  /** @type {[number, number] | null} */
  let range = r ? [Number(r[1]), Number(r[2])] : null;
  if (range && range[1] < range[0]) range = [range[1], range[0]];
  return { range, pin: frameNumber(params.get('pin')), search: (params.get('search') ?? '').slice(0, 256), table: params.get('table') === '1' };
}

/**
 * Writes `view` into `params` (absent parts are removed); returns params.
 * @param {URLSearchParams} params @param {UrlView} view
 */
export function writeUrlView(params, view) {
  const set = (/** @type {string} */ k, /** @type {string | null} */ v) => { if (v === null || v === '') params.delete(k); else params.set(k, v); };
  set('range', view.range ? `${view.range[0]}-${view.range[1]}` : null);
  set('pin', view.pin !== null ? String(view.pin) : null);
  set('search', view.search);
  set('table', view.table ? '1' : null);
  return params;
}
