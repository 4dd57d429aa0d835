// @ts-check
// Colours: the dark theme, frame-budget classes and a stable colour per scope site.
//
// Site colours come from a fixed palette indexed by a hash of the site's name (and file), so the same
// function has the same colour in every frame, every session and every capture, and so the flame
// renderer can batch rectangles by a small number of fill styles (one fill() per palette entry).

export const THEME = {
  background: '#111318',
  region: '#171a21',
  regionAlt: '#1b1f27',
  grid: '#262b35',
  gridStrong: '#323846',
  text: '#d6dbe4',
  textMuted: '#8a93a3',
  textDim: '#5d6573',
  accent: '#5aa9ff',
  selection: 'rgba(90, 169, 255, 0.18)',
  selectionEdge: 'rgba(90, 169, 255, 0.85)',
  pinned: '#f2f4f8',
  budgetLine: 'rgba(255, 255, 255, 0.35)',
  barOk: '#3bb58a',
  barOver: '#e5b444',
  barBad: '#f0555a',
  barOverhead: '#b78cff',
  plotLine: '#7cc4ff',
  plotBand: 'rgba(124, 196, 255, 0.22)',
  plotNonFinite: '#ff6b6b',
  laneHeader: '#1e232c',
  frameEdge: 'rgba(255, 255, 255, 0.10)',
  pinnedBand: 'rgba(255, 255, 255, 0.045)',
  hoverOutline: '#ffffff',
  flameMark: '#5cc2c0',       // under a bar: the frame carries scopes
  searchMark: '#ffd23f',      // search: a frame holding a match, a matching span's outline
  searchDim: '#2a2f39',       // search: spans that do not match
  untracked: '#30283a',       // flame chart: frame time no top-level scope covers
  untrackedText: '#a99bbd',
  font: '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fontSmall: '11px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fontBold: '600 12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  fontMono: '11px ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace',
};

// Twenty hand-picked mid-lightness colours: distinct from their neighbours, readable dark text on top,
// calm on a dark background. A merged (level-of-detail) bucket uses a darker mix of its colour.
const SPAN_COLORS = [
  '#6fa8dc', '#e69966', '#7cc47f', '#b48ee0', '#e3c163', '#e07b9a', '#5cc2c0', '#d97a6c', '#a3c45f', '#8c9eea',
  '#d18fc9', '#67b7e8', '#c9a86a', '#9fd3a8', '#f0a35e', '#c27ba0', '#88c0d0', '#d4b5f0', '#b5cc8e', '#ef8f8f',
];

/**
 * Mixes two '#rrggbb' colours: t = 0 gives a, 1 gives b.
 * @param {string} a @param {string} b @param {number} t
 */
export function mixHex(a, b, t) {
  const pa = parseInt(a.slice(1), 16), pb = parseInt(b.slice(1), 16);
  const ch = (/** @type {number} */ shift) => Math.round(((pa >> shift) & 255) * (1 - t) + ((pb >> shift) & 255) * t);
  return '#' + ((ch(16) << 16) | (ch(8) << 8) | ch(0)).toString(16).padStart(6, '0');
}

/** Flame palette: fill for a span, fill for a merged (level-of-detail) bucket, label colour. */
export const FLAME_PALETTE = SPAN_COLORS.map((fill) => ({ fill, merged: mixHex(fill, '#171a21', 0.45), text: '#0e1116' }));

/**
 * 32-bit FNV-1a hash of a string.
 * @param {string} s
 */
export function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** @typedef {{name?: string, file?: string}} SiteLike */

/**
 * Palette index for a site: by its name (and file), or by id for undeclared sites.
 * @param {SiteLike | null | undefined} site @param {number} [id]
 */
export function siteColorIndex(site, id = 0) {
  const key = site ? `${site.name ?? ''}\u0000${site.file ?? ''}` : `#${id}`;
  return hashString(key) % FLAME_PALETTE.length;
}

/**
 * Palette indices by site id, memoised (hashing a name per span per draw would cost); clear() when
 * declarations change (a site declared late may have been coloured by its id).
 * @param {(id: number) => SiteLike | undefined} siteOf
 */
export function createSiteColors(siteOf) {
  /** @type {Map<number, number>} */
  const memo = new Map();
  return {
    /** @param {number} id */
    colorOf(id) {
      let c = memo.get(id);
      if (c === undefined) { c = siteColorIndex(siteOf(id), id); memo.set(id, c); }
      return c;
    },
    clear() { memo.clear(); },
  };
}

/**
 * Frame budget class: 0 within budget, 1 over budget, 2 over twice the budget.
 * @param {number} ms @param {number} budgetMs
 */
export function budgetClass(ms, budgetMs) {
  if (!(ms > budgetMs)) return 0;
  return ms > 2 * budgetMs ? 2 : 1;
}

export const BUDGET_COLORS = [THEME.barOk, THEME.barOver, THEME.barBad];
