// @ts-check
// The standalone panel page (index.html): mounts the panel and connects it to whatever source this
// page has: the capture list of `vor serve` (GET /api/captures; the first capture or ?capture=<id>,
// with a picker for the others), and .vor files dropped on the page or chosen with the "Open .vor…"
// button. A format 1.1 capture is shown whole through random access (capture_session.js: the newest
// frames first, the overview strip from the capture's index, any window on demand; a served one
// followed live); a 1.0 capture is streamed from its start (the websocket) or read whole (a file),
// as before random access existed. Opening or dropping a file resets the panel and names the file. Both need the capture decoder (sources/decoder.js); without it
// the page says so instead of showing anything made up. One source at a time: opening a file stops
// the stream or the file read before it (even one still waiting for the decoder to load), and a file
// opened before the capture list arrived is kept (the first capture is not opened over it). Query
// parameters: capture=<id>, budget=<ms>, history=<frames>, and the view (url_state.js): range=A-B,
// pin=N, search=text, table=1, applied once the served capture is open and kept in step with the view.

import { mountPanel } from './panel.js';
import { loadCaptureDecoder } from './sources/decoder.js';
import { fetchCaptureList, chooseCapture, createCapturePicker } from './sources/captures.js';
import { connectCaptureStream, captureSocketUrl } from './sources/websocket.js';
import { readCaptureFile, attachFileDrop, createFileButton } from './sources/file.js';
import { CaptureSession } from './capture_session.js';
import { createRemoteAccess, HttpError } from './sources/remote.js';
import { createFileAccess } from './sources/file_access.js';
import { readUrlView, writeUrlView } from './url_state.js';

/**
 * Boots the page into `element`. options: captureListUrl ('/api/captures'), decoderUrl (default
 * capture_decoder.js beside the page). Resolves to {panel, decoder, captures}.
 * @param {HTMLElement} element
 * @param {{captureListUrl?: string, decoderUrl?: string}} [options]
 */
export async function startPanelPage(element, { captureListUrl = '/api/captures', decoderUrl } = {}) {
  const doc = element.ownerDocument;
  const win = /** @type {Window & {vorPanel?: import('./panel.js').Panel}} */ (doc.defaultView);
  const loc = win.location;
  const params = new URLSearchParams(loc.search);
  const history = Number(params.get('history')) || undefined;
  const panel = mountPanel(element, { keyboardTarget: doc, historyFrames: history });
  win.vorPanel = panel; // for the console and for tests
  const budget = Number(params.get('budget'));
  if (budget > 0) panel.setBudget(budget);
  // the view in the URL: search and table now; range and pin once the capture's frames are there
  /** @type {import('./url_state.js').UrlView | null} */
  let pendingView = readUrlView(params);
  if (pendingView.search) panel.model.setSearch(pendingView.search);
  if (pendingView.table) panel.model.toggleTable();
  if (!pendingView.range && pendingView.pin === null) pendingView = null;
  /** @type {number | null} */
  let pinAfterWindow = null;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let urlTimer = null;
  panel.onViewChange(() => {
    if (pendingView || urlTimer) return; // not before the link's view is applied; at most every 250 ms
    urlTimer = setTimeout(() => {
      urlTimer = null;
      const v = panel.viewState();
      const url = new URL(loc.href);
      writeUrlView(url.searchParams, {
        range: v.range ? [v.range[0], v.range[1]] : null, pin: v.paused ? v.pinnedFrameIndex : null, search: v.search, table: v.tableOpen,
      });
      if (url.href !== loc.href) win.history.replaceState(null, '', url);
    }, 250);
  });
  /** Applies the range and pin of the link (once), when the capture's first frames are shown. */
  const applyPendingView = () => {
    const v = pendingView;
    if (!v) return;
    pendingView = null;
    if (v.range) { panel.showFrames(v.range[0], v.range[1]); pinAfterWindow = v.pin; }
    else if (v.pin !== null) { pinAfterWindow = v.pin; panel.showFrameAt(v.pin); }
    if (pinAfterWindow !== null && panel.pinFrameIndex(pinAfterWindow)) pinAfterWindow = null; // already held
  };

  const decoderReady = decoderUrl ? loadCaptureDecoder(decoderUrl) : loadCaptureDecoder(new URL('capture_decoder.js', loc.href).href);
  /** @type {ReturnType<typeof connectCaptureStream> | null} */
  let stream = null;
  /** @type {CaptureSession | null} */
  let session = null;
  /** @type {HTMLSelectElement | null} */
  let picker = null;
  const stopSources = () => {
    stream?.close();
    stream = null;
    session?.close();
    session = null;
  };
  /** @param {{access: import('./sources/remote.js').CaptureAccess, create: () => Promise<import('./sources/decoder.js').CaptureDecoder>, onFormat10: () => void}} o */
  const startSession = ({ access, create, onFormat10 }) => {
    let opened = false;
    const s = new CaptureSession({
      panel, access, createDecoder: create,
      onEvent: (kind, detail) => {
        if (kind === 'open') { opened = true; panel.setCaptureName(access.name ?? ''); applyPendingView(); }
        if (kind === 'window' && pinAfterWindow !== null) { panel.pinFrameIndex(pinAfterWindow); pinAfterWindow = null; }
        win.dispatchEvent(new CustomEvent('vor-session', { detail: { kind, detail } }));
        // a 1.0 capture cannot be read from the middle, and a server without random access (404)
        // cannot give it: read it from its start instead
        const noRandomAccess = detail instanceof HttpError && (detail.status === 404 || (detail.status === 409 && /format 1\.0/.test(detail.message)));
        if (kind === 'error' && !opened && noRandomAccess && session === s) {
          s.close();
          session = null;
          panel.setCanvasMessage(null);
          onFormat10();
        }
      },
    });
    session = s;
    s.open();
    return s;
  };
  /** @type {AbortController | null} */
  let reading = null; // of the latest file opened: the only one allowed to touch the panel
  /** @type {Awaited<typeof decoderReady> | null} */
  let loadedDecoder = null;

  const openFile = async (/** @type {File} */ file) => {
    stopSources();
    reading?.abort();
    const mine = new AbortController(); // before any await: a file opened meanwhile aborts this one
    reading = mine;
    const loaded = await decoderReady;
    if (mine.signal.aborted) return;
    // a new capture: nothing of the previous one stays (frames, selection, pause, overview, name)
    panel.clear();
    panel.setNotice(null);
    panel.setStatus(`${file.name}: reading…`, 'info');
    if (picker) picker.value = '';
    const url = new URL(loc.href);
    url.searchParams.delete('capture');
    win.history.replaceState(null, '', url);
    if (!loaded.decoder) {
      panel.setNotice({ title: 'Cannot open the file: no capture decoder', lines: [loaded.reason] });
      panel.setStatus(`${file.name}: no capture decoder`, 'error');
      return;
    }
    const readWhole = async () => {
      const r = await readCaptureFile(file, loaded.decoder, panel, { signal: mine.signal });
      if (r.error && !mine.signal.aborted) panel.setCanvasMessage({ kind: 'error', text: `${file.name}: ${r.error}` });
    };
    if (!loaded.createIndex || file.size === 0) { await readWhole(); return; }
    const ix = await loaded.createIndex();
    if (mine.signal.aborted) { ix.free?.(); return; }
    const access = createFileAccess(file, ix);
    await access.indexStep(); // the header and the first records: is it a 1.1 capture?
    if (mine.signal.aborted) { ix.free?.(); return; }
    const f = ix.flags();
    if (!f.header || !f.randomAccess) { ix.free?.(); await readWhole(); return; }
    startSession({ access, create: loaded.create, onFormat10: () => { readWhole(); } });
  };
  panel.sourceSlot.append(createFileButton(doc, openFile));
  attachFileDrop(doc.documentElement, openFile, { hoverClassTarget: panel.root });

  /**
   * @param {import('./sources/captures.js').Capture} capture
   * @param {import('./sources/decoder.js').CaptureDecoder | null} decoder  (null: the stream says it cannot decode)
   */
  const openCapture = (capture, decoder) => {
    stopSources();
    reading?.abort();
    reading = null;
    panel.clear();
    panel.setNotice(null);
    const url = new URL(loc.href);
    url.searchParams.set('capture', capture.id);
    win.history.replaceState(null, '', url);
    const streamIt = () => {
      panel.clear();
      stream = connectCaptureStream({ url: captureSocketUrl(capture.ws, loc), decoder, sink: panel, name: capture.name });
    };
    if (!decoder || !loadedDecoder?.create) { streamIt(); return; }
    startSession({ access: createRemoteAccess(capture), create: loadedDecoder.create, onFormat10: streamIt });
  };

  panel.setStatus('looking for captures…', 'info');
  const [list, loaded] = await Promise.all([fetchCaptureList(captureListUrl), decoderReady]);
  const { decoder, reason } = loaded;
  loadedDecoder = loaded;
  const fileOpened = reading !== null; // the user opened a file while the page was loading: it stays
  if (!list.captures) {
    if (fileOpened) return { panel, decoder, captures: null };
    panel.setStatus('no capture server', 'info');
    panel.setNotice(decoder
      ? { title: 'Open a capture', lines: ['Drop a .vor file on the page or use “Open .vor…”.', `Served by vor serve, this page lists and streams captures itself (here: ${list.reason}).`] }
      : { title: 'No data source', lines: [reason, `No capture list either (${list.reason}). Serve this page with vor serve, or embed the panel in a wasm app (live, no decoder needed).`] });
    return { panel, decoder, captures: null };
  }
  if (list.captures.length === 0) {
    if (fileOpened) return { panel, decoder, captures: list.captures };
    panel.setStatus('vor serve has no captures', 'warn');
    panel.setNotice({ title: 'No captures yet', lines: ['vor serve lists no capture. Start it with .vor files or a folder, or drop a file here.'] });
    return { panel, decoder, captures: list.captures };
  }
  const chosen = /** @type {import('./sources/captures.js').Capture} */ (chooseCapture(list.captures, params.get('capture')));
  if (list.captures.length > 1) {
    picker = createCapturePicker(doc, list.captures, chosen.id, (c) => openCapture(c, decoder));
    panel.sourceSlot.prepend(picker);
  }
  if (fileOpened) return { panel, decoder, captures: list.captures };
  if (!decoder) {
    panel.setStatus(`${chosen.name}: no capture decoder`, 'error');
    panel.setNotice({ title: 'No capture decoder available', lines: [reason, `The capture ${chosen.name} is listed but its bytes cannot be decoded on this page.`] });
    return { panel, decoder, captures: list.captures };
  }
  openCapture(chosen, decoder);
  return { panel, decoder, captures: list.captures };
}
