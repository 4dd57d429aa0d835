// @ts-check
// The panel's stylesheet, injected once per document by mountPanel (so embedding the panel is one
// import and one call, with no extra <link> to remember). Everything is scoped under .vor-panel.

export const PANEL_CSS = `
.vor-panel {
  --vor-bg: #111318; --vor-bar: #171a21; --vor-line: #262b35; --vor-text: #d6dbe4;
  --vor-muted: #8a93a3; --vor-accent: #5aa9ff; --vor-warn: #e5b444; --vor-bad: #f0555a; --vor-ok: #3bb58a;
  position: relative; display: flex; flex-direction: column; min-height: 0; height: 100%;
  background: var(--vor-bg); color: var(--vor-text); outline: none;
  font: 12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
.vor-panel * { box-sizing: border-box; }
.vor-toolbar {
  display: flex; align-items: center; gap: 8px; flex-wrap: wrap; padding: 6px 10px;
  background: var(--vor-bar); border-bottom: 1px solid var(--vor-line); min-height: 38px;
}
.vor-toolbar .vor-brand { font-weight: 700; letter-spacing: 0.04em; color: var(--vor-text); margin-right: 4px; }
.vor-toolbar button, .vor-toolbar select, .vor-toolbar input, .vor-toolbar .vor-file {
  font: inherit; color: var(--vor-text); background: #222733; border: 1px solid #323846;
  border-radius: 5px; padding: 3px 9px; height: 26px; cursor: pointer;
}
.vor-toolbar button:hover, .vor-toolbar .vor-file:hover { border-color: #4a5366; background: #272d3a; }
.vor-toolbar input[type=number] { width: 64px; cursor: text; padding: 3px 6px; }
.vor-toolbar label { display: inline-flex; align-items: center; gap: 5px; color: var(--vor-muted); }
.vor-pause { min-width: 92px; }
.vor-pause[data-paused="true"] { color: #111318; background: var(--vor-warn); border-color: var(--vor-warn); font-weight: 600; }
.vor-chip {
  border-radius: 13px !important; color: #cdb8ff !important; border-color: #4b3d6e !important;
  background: #221d33 !important; white-space: nowrap;
}
.vor-chip[aria-pressed="true"] { background: #3a2d5c !important; border-color: #b78cff !important; }
.vor-clock { border-radius: 13px; padding: 3px 9px; border: 1px solid #3a4150; color: var(--vor-muted); white-space: nowrap; }
.vor-clock[data-coarse="true"] { color: #111318; background: var(--vor-warn); border-color: var(--vor-warn); font-weight: 600; }
.vor-stats { color: var(--vor-muted); white-space: nowrap; font-variant-numeric: tabular-nums; }
.vor-spacer { flex: 1; }
.vor-source { display: inline-flex; align-items: center; gap: 6px; }
.vor-status { color: var(--vor-muted); max-width: 48ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.vor-status[data-kind="live"] { color: var(--vor-ok); }
.vor-status[data-kind="error"] { color: var(--vor-bad); white-space: normal; }
.vor-status[data-kind="warn"] { color: var(--vor-warn); white-space: normal; }
.vor-strip { display: block; width: 100%; height: 46px; flex: none; cursor: pointer; border-bottom: 1px solid var(--vor-line); touch-action: none; }
.vor-strip[hidden] { display: none; }
.vor-scroll { position: relative; flex: 1; min-height: 0; overflow-y: auto; overflow-x: hidden; }
.vor-canvas { display: block; width: 100%; touch-action: none; }
.vor-search { display: inline-flex; align-items: center; gap: 3px; }
.vor-toolbar .vor-search input { width: 170px; cursor: text; padding: 3px 6px; }
.vor-toolbar .vor-search button { padding: 3px 7px; }
.vor-search-count { color: var(--vor-muted); font-variant-numeric: tabular-nums; min-width: 4ch; white-space: nowrap; }
.vor-search-count[data-none="true"] { color: var(--vor-warn); }
.vor-table-btn[aria-pressed="true"] { background: #2a3f5c !important; border-color: var(--vor-accent) !important; }
.vor-analysis { flex: 0 0 38%; min-height: 120px; display: flex; flex-direction: column; border-top: 1px solid var(--vor-line); background: var(--vor-bar); }
.vor-analysis[hidden] { display: none; }
.vor-an-head { display: flex; align-items: center; gap: 8px; padding: 4px 10px; border-bottom: 1px solid var(--vor-line); }
.vor-an-title { flex: 1; color: var(--vor-muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.vor-an-head button { font: inherit; color: var(--vor-text); background: #222733; border: 1px solid #323846; border-radius: 5px; padding: 2px 8px; cursor: pointer; }
.vor-an-head button[disabled] { color: var(--vor-muted); cursor: default; }
.vor-an-body { flex: 1; min-height: 0; display: flex; }
.vor-an-table { flex: 1; min-width: 0; overflow: auto; }
.vor-an-table table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
.vor-an-table th { position: sticky; top: 0; background: #1e232c; color: var(--vor-muted); font-weight: 600; text-align: right; padding: 3px 8px; white-space: nowrap; }
.vor-an-table th.vor-sortable { cursor: pointer; }
.vor-an-table th:first-child, .vor-an-table td:first-child { text-align: left; max-width: 40ch; overflow: hidden; text-overflow: ellipsis; }
.vor-an-table td { text-align: right; padding: 2px 8px; white-space: nowrap; border-bottom: 1px solid #1e232c; cursor: pointer; }
.vor-an-table tr.vor-selected td { background: #2a3f5c; }
.vor-an-table tr[data-match="true"] td:first-child { color: #ffd23f; }
.vor-an-more, .vor-an-empty { color: var(--vor-muted); padding: 4px 10px; }
.vor-an-sandwich { flex: 0 0 34%; overflow: auto; border-left: 1px solid var(--vor-line); padding: 4px 0; }
.vor-an-sub { color: var(--vor-muted); font-weight: 600; padding: 4px 10px; }
.vor-an-edge { display: flex; justify-content: space-between; gap: 8px; padding: 1px 10px 1px 18px; cursor: pointer; }
.vor-an-edge:hover { background: #222733; }
.vor-an-ns { color: var(--vor-muted); font-variant-numeric: tabular-nums; }
.vor-an-focus { margin: 4px 10px; padding: 3px 8px; background: #2a3f5c; border-radius: 4px; }
.vor-tooltip {
  position: fixed; z-index: 10; pointer-events: none; max-width: 420px; padding: 7px 9px;
  background: rgba(12, 14, 19, 0.96); border: 1px solid #3a4152; border-radius: 6px;
  box-shadow: 0 6px 20px rgba(0, 0, 0, 0.45); color: var(--vor-text);
}
.vor-tooltip[hidden] { display: none; }
.vor-tooltip .vor-tt-title { font-weight: 600; margin-bottom: 4px; word-break: break-all; }
.vor-tooltip table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
.vor-tooltip td { padding: 0 0 1px 0; vertical-align: top; }
.vor-tooltip td:first-child { color: var(--vor-muted); padding-right: 12px; white-space: nowrap; }
.vor-tooltip .vor-tt-note { color: var(--vor-muted); margin-top: 4px; font-size: 11px; }
.vor-notice {
  position: absolute; left: 50%; top: 38%; transform: translate(-50%, -50%); max-width: 560px;
  padding: 18px 22px; background: rgba(23, 26, 33, 0.97); border: 1px solid #323846; border-radius: 8px;
  color: var(--vor-text); line-height: 1.5; box-shadow: 0 10px 30px rgba(0, 0, 0, 0.5);
}
.vor-notice[hidden] { display: none; }
.vor-notice h2 { margin: 0 0 6px; font-size: 14px; }
.vor-notice p { margin: 4px 0; color: var(--vor-muted); }
.vor-notice code { color: var(--vor-text); background: #222733; padding: 1px 4px; border-radius: 3px; }
.vor-panel.vor-dragover::after {
  content: "Drop a .vor capture"; position: absolute; inset: 8px; display: flex; align-items: center;
  justify-content: center; border: 2px dashed var(--vor-accent); border-radius: 10px;
  background: rgba(90, 169, 255, 0.08); color: var(--vor-accent); font-size: 16px; pointer-events: none;
}
`;

/**
 * Adds the stylesheet to `doc` unless an earlier mount already did.
 * @param {Document} doc
 */
export function injectPanelStyle(doc) {
  if (doc.getElementById('vor-panel-style')) return;
  const style = doc.createElement('style');
  style.id = 'vor-panel-style';
  style.textContent = PANEL_CSS;
  (doc.head || doc.documentElement).appendChild(style);
}
