// Websocket source: streams one capture from `vor serve`.
//
// The server speaks subprotocol `vor-capture` on ws://<host>/capture/<id>. Binary messages are
// consecutive raw bytes of the .vor file (cut anywhere, so a live capture can be tailed as it grows);
// text messages are JSON control messages: {"type":"end"} (the file is complete / the writer stopped)
// and {"type":"error","message":"..."}. Bytes go through a CaptureDecoder (decoder.js) into the sink
// (the panel). Frames arrive as fast as the socket delivers; the panel coalesces them and draws once
// per animation frame.

import { feedDecoder } from './decoder.js';

export const CAPTURE_SUBPROTOCOL = 'vor-capture';

/** ws:// or wss:// URL for a capture path such as "/capture/0", relative to the page's location. */
export function captureSocketUrl(path, location) {
  const u = new URL(path, location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.href;
}

/**
 * Opens the stream. options:
 *   url, decoder (CaptureDecoder), sink ({pushDeclarations, pushFrame, clear?, setStatus?}),
 *   name (for status lines), WebSocketImpl (default globalThis.WebSocket; node tests pass `ws`),
 *   onEvent(kind, detail) with kind 'open' | 'end' | 'error' | 'close'.
 * Returns { close(), stats() }.
 */
export function connectCaptureStream({ url, decoder, sink, name = url, WebSocketImpl = globalThis.WebSocket, onEvent = () => {} }) {
  const st = { bytes: 0, frames: 0, rejected: 0, state: 'connecting', error: null };
  const status = (text, kind) => sink.setStatus?.(text, kind);
  if (!decoder) {
    st.state = 'error';
    st.error = 'no capture decoder';
    status(`${name}: cannot decode .vor bytes without a capture decoder`, 'error');
    return { close() {}, stats: () => ({ ...st }) };
  }
  let ws;
  try {
    ws = new WebSocketImpl(url, CAPTURE_SUBPROTOCOL);
  } catch (err) {
    st.state = 'error';
    st.error = err.message;
    status(`${name}: ${err.message}`, 'error');
    return { close() {}, stats: () => ({ ...st }) };
  }
  ws.binaryType = 'arraybuffer';
  status(`${name}: connecting…`, 'info');

  const fail = (message) => {
    if (st.state === 'error') return;
    st.state = 'error';
    st.error = message;
    status(`${name}: ${message}`, 'error');
    onEvent('error', message);
  };

  ws.addEventListener('open', () => {
    st.state = 'streaming';
    decoder.reset();
    sink.clear?.();
    status(`${name}: streaming`, 'live');
    onEvent('open');
  });
  ws.addEventListener('message', (ev) => {
    // after close() (another capture was opened) or an error, late messages must not reach the sink
    if (st.state !== 'streaming') return;
    const data = ev.data;
    if (typeof data === 'string') {
      let msg;
      try { msg = JSON.parse(data); } catch { fail(`unreadable control message: ${data.slice(0, 80)}`); return; }
      if (msg.type === 'end') {
        st.state = 'ended';
        status(`${name}: complete · ${st.frames.toLocaleString('en-US')} frames`, 'info');
        onEvent('end', msg);
      } else if (msg.type === 'error') {
        fail(msg.message ?? msg.error ?? 'server error');
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
    if (r.error) { fail(`capture unreadable: ${r.error}`); ws.close(1003, 'unreadable capture'); }
  });
  ws.addEventListener('error', () => {
    if (st.state === 'connecting') fail('cannot connect');
  });
  ws.addEventListener('close', (ev) => {
    if (st.state === 'streaming') {
      st.state = 'closed';
      status(`${name}: connection closed${ev.code && ev.code !== 1000 ? ` (code ${ev.code})` : ''} · ${st.frames.toLocaleString('en-US')} frames`, 'warn');
    } else if (st.state === 'connecting') {
      fail('cannot connect');
    }
    onEvent('close', ev.code);
  });

  return {
    close() { if (st.state === 'streaming' || st.state === 'connecting') st.state = 'closed'; try { ws.close(1000); } catch { /* closed */ } },
    stats: () => ({ ...st }),
  };
}
