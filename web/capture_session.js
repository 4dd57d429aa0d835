// @ts-check
// A capture session: one capture shown whole through random access (sources/remote.js for a
// served capture, sources/file_access.js for a file opened on the page). It fills the panel's
// overview from the capture's index (all frames), shows the newest frames first (the tail, found
// without the index, so a viewer sees them at once whatever the capture's size), loads any other
// window of frames when the panel asks (a click or a drag on the overview, older frames on
// demand), and follows a live capture: the bytes after the tail are polled and appended while the
// panel shows the newest frames and is not paused (paused, nothing is appended: resuming shows the
// newest frames again).
//
// Status words (the toolbar, and the canvas for errors and retries): "indexing 45%" while the
// index is built, "live" while following, "complete · N frames" once the end record was read and
// everything shown, a warning for a capture without its end record, "connection lost · retrying
// in N s (attempt K)" while the server cannot be reached, and errors in plain words.
//
// Memory: the panel's window (its bounded store), the overview (bounded: overview.js), the
// decoders' input and at most one range part (4 MiB from vor serve, 16 MiB from a file) at a time.

import { feedDecoder } from './sources/decoder.js';
import { HttpError } from './sources/remote.js';
import { plural } from './text.js';

/** @typedef {import('./sources/remote.js').CaptureAccess} CaptureAccess */
/** @typedef {import('./sources/decoder.js').CaptureDecoder} CaptureDecoder */
/**
 * The panel, as the session drives it (panel.js).
 * @typedef {object} SessionPanel
 * @property {import('./overview.js').Overview} overview
 * @property {(declarations: (object | string)[], views: Uint8Array[], options: {live: boolean}) => void} replaceWindow
 * @property {(json: object | string) => void} pushDeclarations
 * @property {(bytes: Uint8Array) => boolean} pushFrame
 * @property {() => void} clear
 * @property {(text: string, kind?: string) => void} setStatus
 * @property {(m: {kind: string, text: string} | null) => void} setCanvasMessage
 * @property {(p: {indexed: number, total: number, done: boolean} | null) => void} setIndexProgress
 * @property {() => boolean} isFrozen          paused, or a gesture holds the axis
 * @property {() => number} capacity           frames a window holds
 * @property {(index: number) => boolean} pinFrameIndex
 * @property {(i0: number, i1: number) => boolean} pinSlowestIn
 * @property {(i0: number, i1: number) => void} zoomFrameIndexRange
 * @property {(fn: ((r: WindowRequest) => void) | null) => void} onWindowRequest
 * @property {(fn: (() => void) | null) => void} onResume
 */
/** @typedef {{from: number, to: number, pin?: number, pinRange?: [number, number], zoom?: [number, number]}} WindowRequest */

export const TAIL_BYTES = 2 << 20;
export const POLL_MS = 250;
export const INDEX_POLL_EVERY = 4; // index refreshes once in this many polls while following
export const RETRY_MS = [500, 1000, 2000, 4000, 5000];

const count = (/** @type {number} */ n) => n.toLocaleString('en-US');

/** The frame index of a frame view (offset 16, f64). @param {Uint8Array} v */
export function viewFrameIndex(v) {
  return new DataView(v.buffer, v.byteOffset, v.byteLength).getFloat64(16, true);
}

export class CaptureSession {
  /**
   * @param {object} options
   * @param {SessionPanel} options.panel
   * @param {CaptureAccess & {indexStep?: () => Promise<boolean>, indexedBytes?: () => number, size?: number}} options.access
   * @param {() => Promise<CaptureDecoder>} options.createDecoder
   * @param {{setTimeout: typeof setTimeout, clearTimeout: typeof clearTimeout}} [options.timers]
   * @param {number} [options.pollMs]
   * @param {number} [options.tailBytes]
   * @param {(kind: string, detail?: any) => void} [options.onEvent]
   */
  constructor({ panel, access, createDecoder, timers = globalThis, pollMs = POLL_MS, tailBytes = TAIL_BYTES, onEvent = () => {} }) {
    this.panel = panel;
    this.access = access;
    this.createDecoder = createDecoder;
    this.timers = timers;
    this.pollMs = pollMs;
    this.tailBytes = tailBytes;
    this.onEvent = onEvent;
    this.closed = false;
    this.state = 'opening'; // opening | live | complete | ended | error
    this.generation = -1;
    this.followEnd = 0;
    this.header = '';
    this.atEdge = true; // the window ends at the newest frame read
    this.lastFrame = -1; // newest frame index appended
    this.finished = false; // the end record was read
    this.polls = 0;
    this.retries = 0;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    /** @type {AbortController | null} */
    this.loading = null;
    /** @type {CaptureDecoder | null} */ this.rangeDecoder = null;
    /** @type {CaptureDecoder | null} */ this.followDecoder = null;
    this.indexDone = false;
    this.frames = 0; // frames in the capture as far as indexed
    this.refetchIndex = false; // the index merged its entries (a new stride): fetch it whole again
  }

  /** @param {string} text @param {string} [kind] */
  status(text, kind = 'info') { this.panel.setStatus(`${this.access.name}: ${text}`, kind); }

  /** Reads the tail and the index and shows them; then follows (served) or indexes the rest (file). */
  async open() {
    this.panel.onWindowRequest((r) => { this.loadWindow(r); });
    this.panel.onResume(() => { if (!this.atEdge) this.showTail(); });
    this.status('opening…');
    try {
      this.rangeDecoder = await this.createDecoder();
      if (this.closed) return;
      if (this.access.indexStep) await this.access.indexStep(); // a file: its header and first chunk
      const [ix] = await Promise.all([this.access.index(0), this.showTail()]);
      if (this.closed) return;
      if (!ix.randomAccess) throw new HttpError(409, 'this capture cannot be read from the middle (format 1.0)');
      this.takeIndex(ix);
      await this.indexRest(ix);
      if (this.closed) return;
      this.onEvent('open');
      if (this.access.live) this.schedule(0);
      else this.indexFile();
    } catch (err) {
      if (!this.closed) this.fail(err);
    }
  }

  /** Stops everything: nothing of this session reaches the panel after it. */
  close() {
    this.closed = true;
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.loading?.abort();
    this.panel.onWindowRequest(null);
    this.panel.onResume(null);
    this.access.close?.();
  }

  /** @param {any} err */
  fail(err) {
    const message = err instanceof Error ? err.message : String(err);
    this.state = 'error';
    this.status(message, 'error');
    this.panel.setCanvasMessage({ kind: 'error', text: `${this.access.name}: ${message}` });
    this.onEvent('error', err);
  }

  /**
   * Fetches the index parts after `ix` (a response holds a bounded number of entries) and takes them.
   * @param {import('./sources/remote.js').IndexPart} ix
   */
  async indexRest(ix) {
    while (!this.closed && ix.n > 0 && ix.first + ix.n < ix.count) {
      ix = await this.access.index(ix.first + ix.n);
      if (this.closed) return;
      this.takeIndex(ix);
    }
  }

  /** Fetches the index from the overview's last entry (it may have grown) on, whole when it was merged. */
  async refreshIndex() {
    const ov = this.panel.overview;
    let ix = await this.access.index(Math.max(0, ov.count - 1));
    if (this.closed) return;
    this.takeIndex(ix);
    if (this.refetchIndex) { this.refetchIndex = false; ix = await this.access.index(0); if (this.closed) return; this.takeIndex(ix); }
    await this.indexRest(ix);
  }

  /** @param {import('./sources/remote.js').IndexPart} ix */
  takeIndex(ix) {
    if (ix.generation !== this.generation) {
      if (this.generation >= 0) { this.restart('replaced'); return; }
      this.generation = ix.generation;
    }
    const ov = this.panel.overview;
    if (!ov.setEntries(ix.first, ix.entries, ix.n, ix.stride)) { this.refetchIndex = true; return; }
    this.frames = ix.frames;
    this.finished = ix.finished;
    this.indexDone = ix.atEnd && ix.first + ix.n >= ix.count;
    this.panel.setIndexProgress({ indexed: ix.bytesIndexed, total: Math.max(ix.fileBytes, ix.bytesIndexed), done: ix.atEnd });
  }

  /** Decodes a capture stream with a fresh decoder: its declarations and the views of frames [a, b]. @param {Uint8Array} stream @param {number} a @param {number} b */
  decodeStream(stream, a = -Infinity, b = Infinity) {
    const dec = /** @type {CaptureDecoder} */ (this.rangeDecoder);
    dec.reset();
    /** @type {(object | string)[]} */ const declarations = [];
    /** @type {Uint8Array[]} */ const views = [];
    const r = feedDecoder(dec, stream, {
      pushDeclarations: (d) => { declarations.push(d); },
      pushFrame: (v) => { const i = viewFrameIndex(v); if (i >= a && i <= b) views.push(v); return true; },
    });
    if (r.error) throw new Error(`capture unreadable: ${r.error}`);
    return { declarations, views, finished: typeof dec.finished === 'function' && dec.finished() };
  }

  /** The newest frames: the window at the live edge. */
  async showTail() {
    const tail = await this.access.tail(this.tailBytes);
    if (this.closed) return;
    const { declarations, views, finished } = this.decodeStream(tail.stream);
    this.followEnd = tail.end;
    this.header = tail.header;
    this.atEdge = true;
    this.lastFrame = views.length ? viewFrameIndex(views[views.length - 1]) : -1;
    if (finished) this.finished = true;
    this.panel.replaceWindow(declarations, views, { live: true });
    // the follow decoder continues this stream: it has read the header, the state and the records
    if (this.access.live) {
      this.followDecoder ??= await this.createDecoder();
      this.followDecoder.reset();
      feedDecoder(this.followDecoder, tail.stream, { pushDeclarations() {}, pushFrame: () => true });
    }
    if (this.state !== 'error') this.panel.setCanvasMessage(null);
  }

  /**
   * Shows frames [from, to] (at most the panel's capacity, around `pin` when given), pinning and
   * zooming as asked. A newer request cancels this one.
   * @param {WindowRequest} r
   */
  async loadWindow(r) {
    this.loading?.abort();
    const mine = new AbortController();
    this.loading = mine;
    const cap = this.panel.capacity();
    let { from, to } = r;
    if (to - from + 1 > cap) {
      const centre = r.pin ?? Math.round((from + to) / 2);
      from = Math.max(from, centre - Math.floor(cap / 2));
      to = from + cap - 1;
    }
    this.status(`loading frames #${count(from)}–#${count(to)}…`);
    try {
      /** @type {(object | string)[]} */ const declarations = [];
      /** @type {Uint8Array[]} */ const views = [];
      for (let a = from; a <= to;) {
        const part = await this.access.frames(a, to, mine.signal);
        if (mine.signal.aborted || this.closed) return;
        const d = this.decodeStream(part.stream, a, to);
        declarations.push(...d.declarations);
        views.push(...d.views);
        if (part.next === null || part.next <= a) break;
        a = part.next;
      }
      if (mine.signal.aborted || this.closed) return;
      const last = views.length ? viewFrameIndex(views[views.length - 1]) : -1;
      this.atEdge = last >= this.lastFrame && this.indexDone;
      this.panel.replaceWindow(declarations, views, { live: false });
      if (r.zoom) this.panel.zoomFrameIndexRange(r.zoom[0], r.zoom[1]);
      if (r.pinRange) this.panel.pinSlowestIn(r.pinRange[0], r.pinRange[1]);
      else if (r.pin !== undefined) this.panel.pinFrameIndex(r.pin);
      this.reportState();
      this.onEvent('window', { from, to, frames: views.length });
    } catch (err) {
      if (!mine.signal.aborted && !this.closed) this.fail(err);
    } finally {
      if (this.loading === mine) this.loading = null;
    }
  }

  /** @param {number} ms */
  schedule(ms) {
    if (this.closed || this.timer) return;
    this.timer = this.timers.setTimeout(() => { this.timer = null; this.poll(); }, ms);
  }

  /** One turn of following a served capture: new bytes, and the index now and then. */
  async poll() {
    if (this.closed) return;
    try {
      const bytes = /** @type {NonNullable<CaptureAccess['bytes']>} */ (this.access.bytes);
      if (!this.panel.isFrozen() && this.atEdge && !(this.finished && this.state === 'complete')) {
        const part = await bytes(this.followEnd, this.header);
        if (this.closed) return;
        if ('reset' in part) { this.restart(part.reset); return; }
        if (part.bytes.byteLength) { this.follow(part.bytes, part.end); this.reportState(); }
      }
      if (this.polls++ % INDEX_POLL_EVERY === 0 || !this.indexDone) {
        await this.refreshIndex();
        if (this.closed) return;
      }
      if (this.retries) { this.retries = 0; this.panel.setCanvasMessage(null); }
      this.reportState();
      const done = this.finished && this.indexDone && this.atEdge;
      if (!done) this.schedule(this.indexDone ? this.pollMs : Math.min(this.pollMs, 100));
      else this.onEvent('complete');
    } catch (err) {
      if (this.closed) return;
      if (err instanceof HttpError && err.status !== 503) { this.fail(err); return; }
      // the server went away (or is restarting): try again, and say so
      const wait = RETRY_MS[Math.min(this.retries, RETRY_MS.length - 1)];
      this.retries++;
      const text = `connection lost · retrying in ${(wait / 1000).toFixed(wait < 1000 ? 1 : 0)} s (attempt ${this.retries})`;
      this.status(text, 'warn');
      this.panel.setCanvasMessage({ kind: 'warn', text: `${this.access.name}: ${text}` });
      this.onEvent('retry', this.retries);
      this.schedule(wait);
    }
  }

  /** Appends what the bytes after the tail complete. @param {Uint8Array} bytes @param {number} end */
  follow(bytes, end) {
    this.followEnd = end;
    const dec = /** @type {CaptureDecoder} */ (this.followDecoder);
    const r = feedDecoder(dec, bytes, {
      pushDeclarations: (d) => this.panel.pushDeclarations(d),
      pushFrame: (v) => { this.lastFrame = viewFrameIndex(v); return this.panel.pushFrame(v); },
    });
    if (typeof dec.finished === 'function' && dec.finished()) this.finished = true;
    if (r.error) throw new Error(`capture unreadable: ${r.error}`);
  }

  /** A new run replaced the file: start over with it. @param {string} reason */
  restart(reason) {
    if (this.closed) return;
    this.onEvent('reset', reason);
    this.status(`${reason} (a new run?) · starting over`, 'info');
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = null;
    this.generation = -1;
    this.finished = false;
    this.indexDone = false;
    this.panel.overview.clear();
    this.panel.clear();
    this.open();
  }

  reportState() {
    const ov = this.panel.overview;
    const frames = plural(this.frames || ov.totalFrames(), 'frame');
    if (!this.indexDone) {
      this.status(`indexing… ${frames} so far`, this.access.live ? 'live' : 'info');
    } else if (this.finished) {
      this.state = 'complete';
      this.status(`complete · ${frames}`, 'info');
    } else if (this.access.live) {
      this.state = 'live';
      this.status(this.atEdge ? `live · ${frames}` : `${frames} · showing older frames (resume to follow)`, 'live');
    } else {
      this.state = 'ended';
      this.status(`${frames} · ends before its end record: truncated or still being written`, 'warn');
    }
  }

  /** A file: indexes the rest in chunks, yielding between them, the overview growing. */
  async indexFile() {
    const step = /** @type {() => Promise<boolean>} */ (this.access.indexStep);
    try {
      for (;;) {
        const more = await step();
        if (this.closed) return;
        await this.refreshIndex();
        if (this.closed) return;
        this.reportState();
        if (!more) break;
        await new Promise((resolve) => this.timers.setTimeout(resolve, 0));
        if (this.closed) return;
      }
      this.indexDone = true;
      // the tail was shown with the declarations read by then: show it again with all of them
      if (this.atEdge && !this.panel.isFrozen()) await this.showTail();
      if (this.closed) return;
      this.reportState();
      if (this.frames === 0) this.fail(new Error('ends before its first frame: not a complete capture'));
      this.onEvent('indexed');
    } catch (err) {
      if (!this.closed) this.fail(err);
    }
  }
}
