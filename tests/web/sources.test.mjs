// Sources: the in-page adapter, the capture list, the websocket stream (against a real `ws` server)
// and chunked file reading, all feeding a sink through the capture-decoder interface. The decoder
// here is the test stand-in (test_capture.mjs), not a .vor reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import { createInPageSource } from '../../web/sources/in_page.js';
import { parseCaptureList, chooseCapture, fetchCaptureList, formatBytes } from '../../web/sources/captures.js';
import { connectCaptureStream, captureSocketUrl, CAPTURE_SUBPROTOCOL } from '../../web/sources/websocket.js';
import { readCaptureFile } from '../../web/sources/file.js';
import { feedDecoder, isCaptureDecoder, loadCaptureDecoder } from '../../web/sources/decoder.js';
import { buildTestCapture, createCaptureDecoder } from './test_capture.mjs';
import { generateSession } from './synthetic.mjs';
import { parseFrameView } from '../../web/frame_view.js';

/** A sink that records what a source hands the panel (validating frames like the panel does). */
function recordingSink() {
  const s = { declarations: [], frames: [], statuses: [], clears: 0 };
  s.pushDeclarations = (d) => { s.declarations.push(typeof d === 'string' ? JSON.parse(d) : d); };
  s.pushFrame = (u8) => { try { s.frames.push(parseFrameView(u8).frameIndex); return true; } catch { return false; } };
  s.setStatus = (text, kind) => s.statuses.push([kind, text]);
  s.clear = () => { s.clears++; s.frames.length = 0; };
  return s;
}

const session = generateSession({ frames: 40, seed: 9, flameEvery: 2 });
const capture = buildTestCapture(session.declarations, session.frames);

test('in-page source: forwards declarations and frames, reports bad input instead of throwing', () => {
  const sink = recordingSink();
  const src = createInPageSource(sink, { label: 'demo' });
  assert.equal(src.pushDeclarations(JSON.stringify(session.declarations)), true);
  for (const f of session.frames.slice(0, 5)) assert.equal(src.pushFrame(f), true);
  assert.equal(src.pushFrame(new Uint8Array(10)), false);
  assert.deepEqual(src.stats(), { frames: 5, rejected: 1, declarationErrors: 0 });
  assert.deepEqual(sink.statuses[0], ['live', 'demo']);
  const throwing = { ...sink, pushDeclarations: () => { throw new SyntaxError('bad json'); } };
  const src2 = createInPageSource(throwing);
  assert.equal(src2.pushDeclarations('{'), false);
  assert.match(sink.statuses.at(-1)[1], /bad declarations from the app: bad json/);
});

test('capture list: validated, ?capture=<id> chosen when listed, else the first', async () => {
  const body = { captures: [{ id: 0, name: 'a.vor', bytes: 10, ws: '/capture/0' }, { id: '7', name: 'b.vor', bytes: 2048, ws: '/capture/7' }, { name: 'no id' }] };
  const { captures } = parseCaptureList(body);
  assert.equal(captures.length, 2);
  assert.equal(captures[0].id, '0');
  assert.equal(chooseCapture(captures, '7').name, 'b.vor');
  assert.equal(chooseCapture(captures, '99').name, 'a.vor');
  assert.equal(chooseCapture(captures, null).name, 'a.vor');
  assert.equal(chooseCapture([], null), null);
  assert.match(parseCaptureList({}).reason, /without a "captures" array/);
  const fake = async () => ({ ok: false, status: 404 });
  assert.match((await fetchCaptureList('/api/captures', fake)).reason, /HTTP 404/);
  const down = async () => { throw new Error('ECONNREFUSED'); };
  assert.match((await fetchCaptureList('/api/captures', down)).reason, /cannot reach .*ECONNREFUSED/);
  assert.equal(formatBytes(2048), '2.0 KB');
});

test('socket URLs follow the page: ws for http, wss for https', () => {
  assert.equal(captureSocketUrl('/capture/3', new URL('http://127.0.0.1:8080/index.html?capture=3')), 'ws://127.0.0.1:8080/capture/3');
  assert.equal(captureSocketUrl('/capture/0', new URL('https://example.test/vor/')), 'wss://example.test/capture/0');
});

test('feedDecoder hands declarations before frames and survives a throwing decoder', () => {
  const sink = recordingSink();
  const r = feedDecoder(createCaptureDecoder(), capture, sink);
  assert.equal(r.frames, 40);
  assert.equal(r.declarations, 1);
  assert.equal(r.error, null);
  assert.deepEqual(sink.frames, session.frames.map((_, i) => i));
  const bad = feedDecoder({ push() { throw new Error('boom'); }, reset() {} }, capture, sink);
  assert.equal(bad.error, 'decoder failed: boom');
  assert.equal(isCaptureDecoder(createCaptureDecoder()), true);
  assert.equal(isCaptureDecoder({ push() {} }), false);
});

test('loadCaptureDecoder explains a missing decoder module instead of faking one', async () => {
  const r = await loadCaptureDecoder('http://127.0.0.1:9/capture_decoder.js', async () => ({ ok: false, status: 404 }));
  assert.equal(r.decoder, null);
  assert.match(r.reason, /capture_decoder\.js is not served here \(HTTP 404\)/);
});

async function withServer(onConnection, fn) {
  const server = http.createServer();
  const wss = new WebSocketServer({ server, handleProtocols: (set) => (set.has(CAPTURE_SUBPROTOCOL) ? CAPTURE_SUBPROTOCOL : false) });
  wss.on('connection', onConnection);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  try { await fn(`ws://127.0.0.1:${server.address().port}/capture/0`); } finally {
    for (const c of wss.clients) c.terminate();
    wss.close();
    await new Promise((r) => server.close(r));
  }
}

const waitFor = (pred, ms = 5000) => new Promise((resolve, reject) => {
  const t0 = Date.now();
  const tick = () => (pred() ? resolve() : Date.now() - t0 > ms ? reject(new Error('timed out')) : setTimeout(tick, 5));
  tick();
});

test('websocket: bytes cut anywhere are decoded into frames; "end" completes the stream', async () => {
  let protocol;
  await withServer((ws) => {
    protocol = ws.protocol;
    for (let off = 0; off < capture.byteLength; off += 333) ws.send(capture.subarray(off, off + 333));
    ws.send(JSON.stringify({ type: 'end' }));
  }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const stream = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: WebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('end'));
    assert.equal(protocol, CAPTURE_SUBPROTOCOL);
    assert.equal(sink.frames.length, 40);
    assert.equal(sink.clears, 1, 'the panel is cleared when a stream opens');
    assert.equal(stream.stats().state, 'ended');
    assert.equal(stream.stats().bytes, capture.byteLength);
    assert.deepEqual(sink.statuses.at(-1), ['info', 'run.vor: complete · 40 frames']);
    stream.close();
  });
});

test('websocket: a reset (the program re-ran on the same path) reconnects and starts over', async () => {
  let connections = 0;
  await withServer((ws) => {
    connections++;
    if (connections === 1) {
      ws.send(capture.subarray(0, 2000));
      ws.send(JSON.stringify({ type: 'reset', reason: 'replaced', bytes: 2000 }));
      ws.close(1000);
    } else {
      ws.send(capture);
      ws.send(JSON.stringify({ type: 'end' }));
    }
  }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const stream = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: WebSocket,
      onEvent: (k) => events.push(k), reconnectDelayMs: 20 });
    await waitFor(() => events.includes('end'));
    assert.equal(connections, 2, 'reconnected once');
    assert.ok(events.indexOf('reset') < events.lastIndexOf('open'), 'reset, then a new connection');
    assert.equal(sink.clears, 2, 'the panel is cleared for the new run');
    assert.equal(sink.frames.length, 40, 'the new run complete, nothing of the old one');
    assert.equal(stream.stats().resets, 1);
    stream.close();
  });
});

test('websocket: a server error message and an unreadable stream are reported', async () => {
  await withServer((ws) => ws.send(JSON.stringify({ type: 'error', message: 'run.vor: permission denied' })), async (url) => {
    const sink = recordingSink();
    const events = [];
    connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: WebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('error'));
    assert.deepEqual(sink.statuses.at(-1), ['error', 'run.vor: run.vor: permission denied']);
  });
  await withServer((ws) => ws.send(Buffer.from('garbage bytes')), async (url) => {
    const sink = recordingSink();
    const events = [];
    const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'x.vor', WebSocketImpl: WebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('close'));
    assert.equal(s.stats().state, 'error');
    assert.match(sink.statuses.find(([k]) => k === 'error')[1], /x\.vor: capture unreadable: not a test capture/);
  });
});

test('websocket: no decoder, no connection, and a clear message', () => {
  const sink = recordingSink();
  const s = connectCaptureStream({ url: 'ws://127.0.0.1:9/capture/0', decoder: null, sink, name: 'run.vor', WebSocketImpl: WebSocket });
  assert.equal(s.stats().state, 'error');
  assert.match(sink.statuses[0][1], /cannot decode \.vor bytes without a capture decoder/);
});

/** A loopback port nothing listens on: one the kernel just handed out, closed again. */
async function closedPort() {
  const srv = net.createServer();
  await new Promise((resolve, reject) => { srv.once('error', reject); srv.listen(0, '127.0.0.1', resolve); });
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

test('websocket: a refused connection is reported', async () => {
  const sink = recordingSink();
  const events = [];
  const port = await closedPort();
  connectCaptureStream({ url: `ws://127.0.0.1:${port}/capture/0`, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: WebSocket, onEvent: (k) => events.push(k) });
  await waitFor(() => events.includes('close'));
  assert.ok(sink.statuses.some(([k, t]) => k === 'error' && /cannot connect/.test(t)));
});

test('file: read in chunks through the decoder; garbage is reported', async () => {
  const sink = recordingSink();
  let progress = 0;
  const r = await readCaptureFile(new File([capture], 'run.vor'), createCaptureDecoder(), sink, { chunkBytes: 1000, onProgress: (n) => { progress = n; } });
  assert.equal(r.error, null);
  assert.equal(r.frames, 40);
  assert.equal(progress, capture.byteLength);
  assert.deepEqual(sink.statuses.at(-1), ['info', 'run.vor: 40 frames']);
  const bad = await readCaptureFile(new File([new Uint8Array(100)], 'junk.vor'), createCaptureDecoder(), sink);
  assert.match(bad.error, /capture unreadable/);
  const none = await readCaptureFile(new File([capture], 'run.vor'), null, sink);
  assert.equal(none.error, 'no capture decoder');
});

test('websocket: after close() (another capture opened) late bytes never reach the sink', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  await withServer(async (ws) => { await gate; ws.send(capture); ws.send(JSON.stringify({ type: 'end' })); }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'old.vor', WebSocketImpl: WebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('open'));
    s.close();
    release();
    await waitFor(() => events.includes('close'));
    assert.equal(sink.frames.length, 0);
    assert.equal(s.stats().state, 'closed');
  });
});
