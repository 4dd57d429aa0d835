// @ts-check
// Websocket source: streams one capture from `vor serve`.
//
// The server speaks subprotocol `vor-capture` on ws://<host>/capture/<id>. Binary messages are
// consecutive raw bytes of the .vor file (cut anywhere, so a live capture can be tailed as it grows);
// text messages are JSON control messages: {"type":"end"} (the file is complete / the writer stopped),
// {"type":"reset"} (the file was truncated or replaced: a new run; the source reconnects and starts
// over) and {"type":"error","message":"..."}. A control message that is not a JSON object fails the
// stream; an object of an unknown type is ignored (a newer server may send more kinds), with one console
// warning per stream. Bytes go through a CaptureDecoder (decoder.js) into the sink (the panel). Frames
// arrive as fast as the socket delivers; the panel coalesces them and draws once per animation frame.
// When the panel gives up on a stream it closes the socket with 4003 (CLOSE_UNREADABLE): browsers
// accept only 1000 and 3000-4999 from a page.

import { feedDecoder } from './decoder.js';
import { plural } from '../text.js';

export const CAPTURE_SUBPROTOCOL = 'vor-capture';
/** Close code sent when the panel stops reading a stream it cannot read (an application code: a page may not send 1003). */
export const CLOSE_UNREADABLE = 4003;

/**
 * ws:// or wss:// URL for a capture path such as "/capture/0", relative to the page's location.
 * @param {string} path @param {{href: string, protocol: string}} location
 */
export function captureSocketUrl(path, location) {
  const u = new URL(path, location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

/**
 * Opens the stream. options:
 *   url, decoder (CaptureDecoder), sink ({pushDeclarations, pushFrame, clear?, setStatus?}),
 *   name (for status lines), WebSocketImpl (default globalThis.WebSocket; node tests pass `ws`),
 *   onEvent(kind, detail) with kind 'open' | 'end' | 'error' | 'close' | 'reset' | 'ignored' (a control
 *   message of an unknown type),
 *   reconnectDelayMs (500), maxReconnects (120).
 * When the server says the file was truncated, replaced or removed ({"type":"reset"}: a new run
 * of the program writes the same path), the stream reconnects after a short delay and starts
 * over with the new file, clearing the panel; a file that stays away ends the attempts after
 * maxReconnects tries.
 * Returns { close(), stats() }.
 * @param {object} options
 * @param {string} options.url
 * @param {import('./decoder.js').CaptureDecoder | null} options.decoder
 * @param {import('./decoder.js').CaptureSink} options.sink
 * @param {string} [options.name]
 * @param {new (url: string, protocol: string) => WebSocket} [options.WebSocketImpl]
 * @param {(kind: 'open' | 'end' | 'error' | 'close' | 'reset' | 'ignored', detail?: any) => void} [options.onEvent]
 * @param {number} [options.reconnectDelayMs]
 * @param {number} [options.maxReconnects]
 */
export function connectCaptureStream({
  url, decoder, sink, name = url, WebSocketImpl = globalThis.WebSocket, onEvent = () => {},
  reconnectDelayMs = 500, maxReconnects = 120,
}) {
  /** @type {{bytes: number, frames: number, rejected: number, state: string, error: string | null, resets: number, ignored: number}} */
  const st = { bytes: 0, frames: 0, rejected: 0, state: 'connecting', error: null, resets: 0, ignored: 0 };
  const status = (/** @type {string} */ text, /** @type {string} */ kind) => sink.setStatus?.(text, kind);
  if (!decoder) {
    st.state = 'error';
    st.error = 'no capture decoder';
    status(`${name}: cannot decode .vor bytes without a capture decoder`, 'error');
    return { close() {}, stats: () => ({ ...st }) };
  }
  /** @type {WebSocket | null} */
  let ws = null;
  let closedByUser = false;
  /** @type {ReturnType<typeof setTimeout> | null} */
  let retryTimer = null;
  let attempts = 0;

  const fail = (/** @type {string} */ message) => {
    if (st.state === 'error') return;
    st.state = 'error';
    st.error = message;
    status(`${name}: ${message}`, 'error');
    onEvent('error', message);
  };

  const scheduleReconnect = () => {
    if (closedByUser) return;
    if (attempts >= maxReconnects) { fail('the capture did not come back'); return; }
    attempts++;
    st.state = 'reconnecting';
    retryTimer = setTimeout(() => { retryTimer = null; if (!closedByUser) open(); }, reconnectDelayMs);
  };

  const open = () => {
    let socket;
    try {
      socket = new WebSocketImpl(url, CAPTURE_SUBPROTOCOL);
    } catch (err) {
      fail(err.message);
      return;
    }
    ws = socket;
    socket.binaryType = 'arraybuffer';
    if (st.state !== 'reconnecting') status(`${name}: connecting…`, 'info');
    const mine = () => ws === socket; // events of a socket that was replaced are ignored
    // stop reading: report, and tell the server to stop sending (close() throws on codes a page may not use)
    const giveUp = (/** @type {string} */ message) => {
      fail(message);
      try { socket.close(CLOSE_UNREADABLE, 'unreadable capture'); } catch { /* already closing */ }
    };

    socket.addEventListener('open', () => {
      if (!mine()) return;
      st.state = 'streaming';
      st.bytes = 0;
      st.frames = 0;
      attempts = 0;
      decoder.reset();
      sink.clear?.();
      status(`${name}: streaming`, 'live');
      onEvent('open');
    });
    socket.addEventListener('message', (ev) => {
      // after close() (another capture was opened) or an error, late messages must not reach the sink
      if (!mine() || st.state !== 'streaming') return;
      const data = ev.data;
      if (typeof data === 'string') {
        let msg = null;
        try { msg = JSON.parse(data); } catch { /* reported below */ }
        if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
          giveUp(`unreadable control message: ${data.slice(0, 80)}`);
          return;
        }
        if (msg.type === 'end') {
          st.state = 'ended';
          const frames = plural(st.frames, 'frame');
          // the server has sent every byte; a capture without its end record was cut short
          if (typeof decoder.finished === 'function' && !decoder.finished()) {
            status(`${name}: ${frames} · ends before its end record: the writer stopped or crashed`, 'warn');
          } else {
            status(`${name}: complete · ${frames}`, 'info');
          }
          onEvent('end', msg);
        } else if (msg.type === 'reset') {
          st.resets++;
          st.state = 'reconnecting';
          status(`${name}: ${msg.reason ?? 'replaced'} (a new run?) · reconnecting`, 'info');
          onEvent('reset', msg);
        } else if (msg.type === 'error') {
          fail(String(msg.message ?? msg.error ?? 'server error'));
        } else {
          // a newer server's message: not an error, but say so once
          if (st.ignored++ === 0) console.warn(`vor: ${name}: ignoring control messages of unknown type (first: ${JSON.stringify(msg.type ?? null)})`);
          onEvent('ignored', msg);
        }
        return;
      }
      const bytes = data instanceof ArrayBuffer ? new Uint8Array(data)
        : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
      if (!bytes) { fail('unexpected message type'); return; }
      st.bytes += bytes.byteLength;
      const r = feedDecoder(decoder, bytes, sink);
      st.frames += r.frames;
      st.rejected += r.rejected;
      if (r.error) giveUp(`capture unreadable: ${r.error}`);
    });
    socket.addEventListener('error', () => {
      if (!mine()) return;
      if (st.state === 'connecting') fail('cannot connect');
    });
    socket.addEventListener('close', (ev) => {
      if (!mine()) return;
      if (st.state === 'reconnecting') {
        scheduleReconnect();
      } else if (st.state === 'streaming') {
        st.state = 'closed';
        status(`${name}: connection closed${ev.code && ev.code !== 1000 ? ` (code ${ev.code})` : ''} · ${plural(st.frames, 'frame')}`, 'warn');
      } else if (st.state === 'connecting') {
        fail('cannot connect');
      }
      onEvent('close', ev.code);
    });
  };

  open();
  return {
    close() {
      closedByUser = true;
      if (retryTimer) { clearTimeout(retryTimer); retryTimer = null; }
      if (st.state === 'streaming' || st.state === 'connecting' || st.state === 'reconnecting') st.state = 'closed';
      try { ws?.close(1000); } catch { /* closed */ }
    },
    stats: () => ({ ...st }),
  };
}
