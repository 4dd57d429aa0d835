// @ts-check
// The panel's DOM: the toolbar (brand, pause button, budget field, overhead and clock chips, counts,
// the slot where a page puts its source controls, status), the overview strip, the scrolling canvas, the tooltip and
// the notice, and the writers that put text into them. Text from the profiled program (names,
// paths) goes in with textContent only, never parsed as HTML. Holds no view state.

/** @typedef {import('./toolbar_text.js').ToolbarText} ToolbarText */
/** @typedef {import('./hover.js').Hover} Hover */
/**
 * @typedef {object} PanelDom
 * @property {HTMLDivElement} root
 * @property {HTMLButtonElement} pauseBtn
 * @property {HTMLInputElement} budgetInput
 * @property {HTMLButtonElement} scaleBtn    the bars' y-axis mode ("y: fit")
 * @property {HTMLButtonElement} chip        the overhead chip
 * @property {HTMLSpanElement} clockChip
 * @property {HTMLSpanElement} stats
 * @property {HTMLSpanElement} sourceSlot    where a page puts its source controls
 * @property {HTMLSpanElement} status
 * @property {HTMLInputElement} searchInput  scope name search
 * @property {HTMLSpanElement} searchCount   "3 / 12 matches"
 * @property {HTMLButtonElement} searchPrev
 * @property {HTMLButtonElement} searchNext
 * @property {HTMLButtonElement} tableBtn     shows / hides the scope table
 * @property {HTMLDivElement} analysis        the scope table pane (render/scope_table.js)
 * @property {HTMLCanvasElement} strip     the overview strip (every frame of the capture)
 * @property {HTMLDivElement} scroll
 * @property {HTMLCanvasElement} canvas
 * @property {HTMLDivElement} tooltip
 * @property {HTMLDivElement} notice
 */

/**
 * A new element with a class and attributes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {Document} doc @param {K} tag @param {string} [cls] @param {Record<string, string>} [attrs]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(doc, tag, cls = '', attrs = {}) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

/**
 * Builds the panel's elements and appends them to `element`.
 * @param {HTMLElement} element @param {{title?: string, budgetMs: number}} options
 * @returns {PanelDom}
 */
export function buildPanelDom(element, { title = 'vor', budgetMs }) {
  const doc = element.ownerDocument;
  const root = el(doc, 'div', 'vor-panel', { tabindex: '0' });
  const toolbar = el(doc, 'div', 'vor-toolbar');
  const brand = el(doc, 'span', 'vor-brand');
  brand.textContent = title;
  const pauseBtn = el(doc, 'button', 'vor-pause', { type: 'button', title: 'Freeze / follow the stream (space)' });
  const budgetLabel = el(doc, 'label', 'vor-budget', { title: 'Frame budget: bars over it turn amber, over twice it red' });
  const budgetInput = el(doc, 'input', '', { type: 'number', min: '0.1', step: '0.1' });
  budgetLabel.append('budget', budgetInput, 'ms');
  budgetInput.value = String(budgetMs);
  const scaleBtn = el(doc, 'button', 'vor-yscale', { type: 'button', title: 'The frame bars\' y axis: fit to the frame times in view, from zero with the budget, or log. Click for the next.' });
  const chip = el(doc, 'button', 'vor-chip vor-overhead', { type: 'button', 'aria-pressed': 'false' });
  const clockChip = el(doc, 'span', 'vor-clock', { hidden: '' });
  const stats = el(doc, 'span', 'vor-stats');
  const search = el(doc, 'span', 'vor-search');
  const searchInput = el(doc, 'input', '', { type: 'search', placeholder: 'search scopes (Ctrl+F)', 'aria-label': 'Search scopes by name', spellcheck: 'false' });
  const searchCount = el(doc, 'span', 'vor-search-count');
  const searchPrev = el(doc, 'button', '', { type: 'button', title: 'Previous match (Shift+Enter)', 'aria-label': 'Previous match' });
  searchPrev.textContent = '‹';
  const searchNext = el(doc, 'button', '', { type: 'button', title: 'Next match (Enter)', 'aria-label': 'Next match' });
  searchNext.textContent = '›';
  search.append(searchInput, searchCount, searchPrev, searchNext);
  const tableBtn = el(doc, 'button', 'vor-table-btn', { type: 'button', 'aria-pressed': 'false', title: 'Table of scopes for the pinned frame or the zoomed range (calls, total, self, mean, max), callers and callees, comparison' });
  tableBtn.textContent = 'Scopes';
  const spacer = el(doc, 'span', 'vor-spacer');
  const sourceSlot = el(doc, 'span', 'vor-source');
  const status = el(doc, 'span', 'vor-status', { role: 'status' });
  toolbar.append(brand, pauseBtn, budgetLabel, scaleBtn, chip, clockChip, search, tableBtn, stats, spacer, sourceSlot, status);
  const strip = el(doc, 'canvas', 'vor-strip', { hidden: '', title: 'Every frame of the capture (min, mean and max frame time per column; ticks: frames with scopes). Click: show the frames there; drag: zoom to them.' });
  const scroll = el(doc, 'div', 'vor-scroll');
  const canvas = el(doc, 'canvas', 'vor-canvas');
  const tooltip = el(doc, 'div', 'vor-tooltip', { hidden: '' });
  const notice = el(doc, 'div', 'vor-notice', { hidden: '' });
  const analysis = el(doc, 'div', 'vor-analysis', { hidden: '' });
  scroll.append(canvas);
  root.append(toolbar, strip, scroll, analysis, tooltip, notice);
  element.append(root);
  return {
    root, pauseBtn, budgetInput, scaleBtn, chip, clockChip, stats, sourceSlot, status, strip, scroll, canvas, tooltip, notice,
    searchInput, searchCount, searchPrev, searchNext, tableBtn, analysis,
  };
}

/**
 * Writes the toolbar; the chips and counts only when their text changed (`lastKey`).
 * Returns the key written.
 * @param {PanelDom} dom @param {ToolbarText} t @param {string} lastKey
 */
export function writeToolbar(dom, t, lastKey) {
  dom.pauseBtn.textContent = t.pause.text;
  dom.pauseBtn.dataset.paused = String(t.pause.paused);
  if (t.key === lastKey) return lastKey;
  dom.clockChip.hidden = !t.clock.text;
  dom.clockChip.textContent = t.clock.text;
  dom.clockChip.title = t.clock.title;
  dom.clockChip.dataset.coarse = String(t.clock.coarse);
  dom.chip.textContent = t.chip.text;
  dom.chip.title = t.chip.title;
  dom.chip.setAttribute('aria-pressed', String(t.chip.pressed));
  dom.stats.textContent = t.stats.text;
  dom.stats.title = t.stats.title;
  return t.key;
}

/**
 * Shows the hover's tooltip next to the pointer (kept inside the window), or hides it.
 * @param {HTMLDivElement} tooltip @param {Hover | null} h
 */
export function writeTooltip(tooltip, h) {
  if (!h || !h.tip) { if (!tooltip.hidden) tooltip.hidden = true; return; }
  const doc = tooltip.ownerDocument;
  const win = /** @type {Window} */ (doc.defaultView);
  const { title, rows, note } = h.tip;
  tooltip.replaceChildren();
  const t = el(doc, 'div', 'vor-tt-title');
  t.textContent = title;
  const table = el(doc, 'table');
  for (const [k, v] of rows) {
    const tr = el(doc, 'tr');
    const a = el(doc, 'td'); a.textContent = k;
    const b = el(doc, 'td'); b.textContent = v;
    tr.append(a, b);
    table.append(tr);
  }
  tooltip.append(t, table);
  if (note) { const n = el(doc, 'div', 'vor-tt-note'); n.textContent = note; tooltip.append(n); }
  tooltip.hidden = false;
  const vw = win.innerWidth, vh = win.innerHeight;
  const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
  let x = h.p.clientX + 14, y = h.p.clientY + 16;
  if (x + tw > vw - 4) x = Math.max(4, h.p.clientX - tw - 14);
  if (y + th > vh - 4) y = Math.max(4, h.p.clientY - th - 12);
  tooltip.style.left = `${x}px`;
  tooltip.style.top = `${y}px`;
}

/**
 * A centred notice (a title and paragraphs) over the panel, or none (null).
 * @param {HTMLDivElement} notice @param {{title: string, lines?: string[]} | null} content
 */
export function writeNotice(notice, content) {
  notice.replaceChildren();
  if (!content) { notice.hidden = true; return; }
  const doc = notice.ownerDocument;
  const h = el(doc, 'h2'); h.textContent = content.title;
  notice.append(h);
  for (const line of content.lines ?? []) { const p = el(doc, 'p'); p.textContent = line; notice.append(p); }
  notice.hidden = false;
}

/**
 * The status line: text and its kind (info, live, warn, error).
 * @param {HTMLSpanElement} status @param {string} text @param {string} kind
 */
export function writeStatus(status, text, kind) {
  status.textContent = text;
  status.title = text;
  status.dataset.kind = kind;
}
