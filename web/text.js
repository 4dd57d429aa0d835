// @ts-check
// Text measurement cache and label trimming.
//
// measureText is the most expensive call in a label pass, and flame labels repeat (the same few hundred
// site names every frame), so widths are cached per font. The cache is cleared when the font or the
// devicePixelRatio changes (glyph metrics and hinting can differ between scales) and when it grows past
// a bound, so it cannot grow without limit while prefixes of many names are measured for trimming.

/** @typedef {ReturnType<typeof createTextMeasurer>} TextMeasurer */

export const ELLIPSIS = '…';
/** A trimmed label keeps at least this many characters: "m…" or a lone letter names nothing. */
export const MIN_TRIMMED_CHARS = 3;

/**
 * A count with its noun, singular for exactly one: `plural(1, 'scope')` is "1 scope",
 * `plural(12500, 'frame')` "12,500 frames". `many` for irregular plurals.
 * @param {number} n @param {string} one @param {string} [many]
 */
export function plural(n, one, many = `${one}s`) {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/**
 * Longest prefix of `text` that fits `maxWidth` with an ellipsis appended, or `text` itself when it
 * fits, or '' when not even MIN_TRIMMED_CHARS characters and the ellipsis fit (a label that cannot
 * say which name it is, like "m…", is hidden). `measure(s)` returns a width.
 * Binary search over the prefix length: O(log n) measurements (cached by the caller's measurer).
 * @param {string} text @param {number} maxWidth @param {(s: string) => number} measure @param {string} [ellipsis]
 */
export function trimText(text, maxWidth, measure, ellipsis = ELLIPSIS) {
  if (!(maxWidth > 0) || text.length === 0) return '';
  if (measure(text) <= maxWidth) return text;
  const ell = measure(ellipsis);
  if (ell > maxWidth) return '';
  let lo = 0; // prefix length known to fit (with ellipsis)
  let hi = text.length - 1; // longest prefix length still worth trying
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(text.slice(0, mid)) + ell <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  const kept = text.slice(0, lo).trimEnd();
  if (kept.length < MIN_TRIMMED_CHARS) return '';
  return kept + ellipsis;
}

/**
 * A cached text measurer around `rawMeasure(font, text) -> width` (in a browser: canvas measureText).
 * measurer.width(text, font?) and measurer.trim(text, maxWidth, font?) use `font` or the default font
 * (setFont). One cache per font; setScale(devicePixelRatio) clears everything when the ratio changes.
 * @param {(font: string, text: string) => number} rawMeasure
 * @param {{maxEntries?: number, font?: string}} [options]
 */
export function createTextMeasurer(rawMeasure, { maxEntries = 20000, font: initialFont = '' } = {}) {
  /** @type {Map<string, Map<string, number>>} */
  let caches = new Map(); // font -> Map(text -> width)
  let entries = 0;
  let defaultFont = initialFont;
  let scale = 0;
  let hits = 0;
  let misses = 0;
  /** @param {string} text @param {string} [font] */
  const width = (text, font = defaultFont) => {
    let cache = caches.get(font);
    if (cache === undefined) caches.set(font, (cache = new Map()));
    let w = cache.get(text);
    if (w === undefined) {
      misses++;
      if (entries >= maxEntries) { caches = new Map([[font, (cache = new Map())]]); entries = 0; }
      w = rawMeasure(font, text);
      cache.set(text, w);
      entries++;
    } else hits++;
    return w;
  };
  const clear = () => { caches = new Map(); entries = 0; };
  return {
    width,
    /** @param {string} text @param {number} maxWidth @param {string} [font] */
    trim: (text, maxWidth, font = defaultFont) => trimText(text, maxWidth, (t) => width(t, font)),
    /** @param {string} f */
    setFont(f) { defaultFont = f; },
    /** @param {number} s */
    setScale(s) { if (s !== scale) { scale = s; clear(); } },
    clear,
    get size() { return entries; },
    get stats() { return { hits, misses, size: entries }; },
  };
}

/**
 * rawMeasure on a 2D context used for nothing but measuring (its own small canvas), so the font set
 * here is never changed behind the measurer's back and is set only when it differs.
 * @param {CanvasRenderingContext2D} ctx
 */
export function canvasRawMeasure(ctx) {
  /** @type {string | null} */
  let current = null;
  return (/** @type {string} */ font, /** @type {string} */ text) => {
    if (current !== font) { ctx.font = font; current = font; }
    return ctx.measureText(text).width;
  };
}
