// @ts-check
// The standalone panel page (index.html): mounts the panel and connects it to whatever source this
// page has: the capture list of `vor serve` (GET /api/captures, then a websocket per capture, the
// first one or ?capture=<id>, with a picker for the others), and .vor files dropped on the page or
// chosen with the "Open .vor…" button. Both need the capture decoder (sources/decoder.js); without it
// the page says so instead of showing anything made up. One source at a time: opening a file stops
// the stream or the file read before it (even one still waiting for the decoder to load), and a file
// opened before the capture list arrived is kept (the first capture is not opened over it). Query
// parameters: capture=<id>, budget=<ms>, history=<frames>.

import { mountPanel } from './panel.js';
import { loadCaptureDecoder } from './sources/decoder.js';
import { fetchCaptureList, chooseCapture, createCapturePicker } from './sources/captures.js';
import { connectCaptureStream, captureSocketUrl } from './sources/websocket.js';
import { readCaptureFile, attachFileDrop, createFileButton } from './sources/file.js';

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

  const decoderReady = decoderUrl ? loadCaptureDecoder(decoderUrl) : loadCaptureDecoder(new URL('capture_decoder.js', loc.href).href);
  /** @type {ReturnType<typeof connectCaptureStream> | null} */
  let stream = null;
  /** @type {AbortController | null} */
  let reading = null; // of the latest file opened: the only one allowed to touch the panel

  const openFile = async (/** @type {File} */ file) => {
    stream?.close();
    stream = null;
    reading?.abort();
    const mine = new AbortController(); // before any await: a file opened meanwhile aborts this one
    reading = mine;
    const { decoder, reason } = await decoderReady;
    if (mine.signal.aborted) return;
    if (!decoder) {
      panel.setNotice({ title: 'Cannot open the file: no capture decoder', lines: [reason] });
      panel.setStatus(`${file.name}: no capture decoder`, 'error');
      return;
    }
    panel.setNotice(null);
    await readCaptureFile(file, decoder, panel, { signal: mine.signal });
  };
  panel.sourceSlot.append(createFileButton(doc, openFile));
  attachFileDrop(doc.documentElement, openFile, { hoverClassTarget: panel.root });

  /**
   * @param {import('./sources/captures.js').Capture} capture
   * @param {import('./sources/decoder.js').CaptureDecoder | null} decoder  (null: the stream says it cannot decode)
   */
  const openCapture = (capture, decoder) => {
    stream?.close();
    reading?.abort();
    reading = null;
    const url = new URL(loc.href);
    url.searchParams.set('capture', capture.id);
    win.history.replaceState(null, '', url);
    stream = connectCaptureStream({ url: captureSocketUrl(capture.ws, loc), decoder, sink: panel, name: capture.name });
  };

  panel.setStatus('looking for captures…', 'info');
  const [list, { decoder, reason }] = await Promise.all([fetchCaptureList(captureListUrl), decoderReady]);
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
    panel.sourceSlot.prepend(createCapturePicker(doc, list.captures, chosen.id, (c) => openCapture(c, decoder)));
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
