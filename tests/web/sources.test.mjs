// Sources: the in-page adapter, the capture list, the websocket stream (against a real `ws` server,
// through a client that refuses close codes a browser refuses) and chunked file reading (aborted
// reads, empty and truncated files), all feeding a sink through the capture-decoder interface. The
// decoder here is the test stand-in (test_capture.mjs), not a .vor reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import { createInPageSource } from '../../web/sources/in_page.js';
import { parseCaptureList, chooseCapture, fetchCaptureList, formatBytes } from '../../web/sources/captures.js';
import { connectCaptureStream, captureSocketUrl, CAPTURE_SUBPROTOCOL, CLOSE_UNREADABLE } from '../../web/sources/websocket.js';
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

/**
 * `ws` as a browser's WebSocket would behave: close() throws InvalidAccessError unless the code is
 * 1000 or in 3000-4999 (WHATWG WebSockets, close()). `ws` itself sends any code, 1003 included.
 */
class BrowserWebSocket extends WebSocket {
  close(code, reason) {
    if (code !== undefined && code !== 1000 && !(code >= 3000 && code <= 4999)) {
      throw new DOMException(`close code ${code} is neither 1000 nor in 3000-4999`, 'InvalidAccessError');
    }
    return super.close(code, reason);
  }
}

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
    const stream = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
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

test('websocket: "end" after a capture cut short (no end record) is a warning, not "complete"', async () => {
  const cut = capture.subarray(0, capture.byteLength - 1); // the end record's last byte is missing
  await withServer((ws) => {
    ws.send(cut);
    ws.send(JSON.stringify({ type: 'end' }));
  }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const stream = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('end'));
    assert.equal(sink.frames.length, 40, 'every complete frame is shown');
    assert.deepEqual(sink.statuses.at(-1), ['warn', 'run.vor: 40 frames · ends before its end record: the writer stopped or crashed']);
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
    const stream = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket,
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

test('websocket: a server error message is reported', async () => {
  await withServer((ws) => ws.send(JSON.stringify({ type: 'error', message: 'run.vor: permission denied' })), async (url) => {
    const sink = recordingSink();
    const events = [];
    connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('error'));
    assert.deepEqual(sink.statuses.at(-1), ['error', 'run.vor: run.vor: permission denied']);
  });
});

test('websocket: an unreadable stream is closed with a code a browser may send, so the server stops', async () => {
  let serverSaw = null;
  await withServer((ws) => {
    ws.on('close', (code) => { serverSaw = code; });
    ws.send(Buffer.from('garbage bytes'));
  }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'x.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('close') && serverSaw !== null);
    assert.equal(s.stats().state, 'error');
    assert.match(sink.statuses.find(([k]) => k === 'error')[1], /x\.vor: capture unreadable: not a test capture/);
    assert.equal(serverSaw, CLOSE_UNREADABLE, 'the panel closed the socket itself, with its application code');
    assert.equal(CLOSE_UNREADABLE >= 3000 && CLOSE_UNREADABLE <= 4999, true);
  });
});

test('websocket: a control message that is not a JSON object fails the stream and closes it', async () => {
  for (const text of ['null', '5', '"end"', '[1]', '{nope']) {
    let serverSaw = null;
    await withServer((ws) => {
      ws.on('close', (code) => { serverSaw = code; });
      ws.send(text);
    }, async (url) => {
      const sink = recordingSink();
      const events = [];
      const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'x.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
      await waitFor(() => events.includes('close') && serverSaw !== null);
      assert.equal(s.stats().state, 'error', text);
      assert.deepEqual(sink.statuses.at(-1), ['error', `x.vor: unreadable control message: ${text}`]);
      assert.equal(serverSaw, CLOSE_UNREADABLE, text);
    });
  }
});

test('websocket: control messages of an unknown type are ignored (a newer server), reported once', async (t) => {
  const warnings = [];
  t.mock.method(console, 'warn', (...a) => warnings.push(a.join(' ')));
  await withServer((ws) => {
    ws.send(JSON.stringify({ type: 'progress', bytes: 10 }));
    ws.send(capture.subarray(0, 500));
    ws.send(JSON.stringify({ type: 'progress', bytes: 500 }));
    ws.send(JSON.stringify({ note: 'no type at all' }));
    ws.send(capture.subarray(500));
    ws.send(JSON.stringify({ type: 'end' }));
  }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('end'));
    assert.equal(s.stats().state, 'ended');
    assert.equal(s.stats().ignored, 3);
    assert.equal(events.filter((k) => k === 'ignored').length, 3);
    assert.equal(sink.frames.length, 40);
    assert.ok(!sink.statuses.some(([k]) => k === 'error'));
    assert.equal(warnings.length, 1, 'one warning for the stream');
    assert.match(warnings[0], /run\.vor: ignoring control messages of unknown type \(first: "progress"\)/);
    s.close();
  });
});

test('websocket: no decoder, no connection, and a clear message', () => {
  const sink = recordingSink();
  const s = connectCaptureStream({ url: 'ws://127.0.0.1:9/capture/0', decoder: null, sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket });
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
  connectCaptureStream({ url: `ws://127.0.0.1:${port}/capture/0`, decoder: createCaptureDecoder(), sink, name: 'run.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
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

/** A Blob-like file whose chunk reads each take `ms` (a slow disk, a large file); .pending: reads in flight. */
function slowFile(bytes, name, ms = 20) {
  const file = { pending: 0 };
  const make = (b) => ({
    name, size: b.byteLength, slice: (a, e) => make(b.subarray(a, e)),
    arrayBuffer: () => {
      file.pending++;
      return new Promise((resolve) => setTimeout(() => { file.pending--; resolve(b.slice().buffer); }, ms));
    },
  });
  return Object.assign(file, make(bytes));
}

test('file: an aborted read stops feeding the shared decoder; the file opened after it loads cleanly', async () => {
  const other = generateSession({ frames: 25, seed: 3 });
  const a = slowFile(capture, 'a.vor'), b = slowFile(buildTestCapture(other.declarations, other.frames), 'b.vor');
  const decoder = createCaptureDecoder(), sink = recordingSink();
  const first = new AbortController();
  const readA = readCaptureFile(a, decoder, sink, { chunkBytes: 500, signal: first.signal });
  await waitFor(() => sink.frames.length > 0 && a.pending > 0); // a.vor: a later chunk is being read
  first.abort();
  const statusesBeforeB = sink.statuses.length;
  const readB = readCaptureFile(b, decoder, sink, { chunkBytes: 500, signal: new AbortController().signal });
  const [ra, rb] = await Promise.all([readA, readB]);
  assert.equal(rb.error, null);
  assert.equal(rb.frames, 25);
  assert.deepEqual(sink.frames, other.frames.map((_, i) => i), 'only b.vor reached the sink');
  assert.ok(!sink.statuses.some(([k]) => k === 'error'), JSON.stringify(sink.statuses));
  assert.deepEqual(sink.statuses.slice(statusesBeforeB), [['info', 'b.vor: reading…'], ['info', 'b.vor: 25 frames']]);
  assert.equal(ra.error, null, 'an abort is not an error');
  assert.equal(ra.aborted, true);
  // aborted before it started: nothing is touched
  const clears = sink.clears;
  const late = await readCaptureFile(a, decoder, sink, { signal: first.signal });
  assert.equal(late.aborted, true);
  assert.equal(sink.clears, clears);
});

test('file: empty, cut and unfinished files are not reported as complete captures', async () => {
  const read = async (bytes, name) => {
    const sink = recordingSink();
    const r = await readCaptureFile(new File([bytes], name), createCaptureDecoder(), sink, { chunkBytes: 1000 });
    return { ...r, status: sink.statuses.at(-1) };
  };
  const empty = await read(new Uint8Array(0), 'empty.vor');
  assert.equal(empty.error, 'empty file, not a .vor capture');
  assert.deepEqual(empty.status, ['error', 'empty.vor: empty file, not a .vor capture']);

  const header = await read(capture.subarray(0, 3), 'hdr.vor');
  assert.equal(header.frames, 0);
  assert.deepEqual(header.status, ['error', 'hdr.vor: ends before its first frame: not a complete capture']);

  const cut = await read(capture.subarray(0, Math.floor(capture.byteLength * 0.6)), 'cut.vor');
  assert.equal(cut.error, null, 'the frames read are kept and shown');
  assert.equal(cut.truncated, true);
  assert.ok(cut.frames > 5 && cut.frames < 40, `${cut.frames} frames`);
  assert.deepEqual(cut.status, ['warn', `cut.vor: ${cut.frames} frames · ends before its end record: truncated or still being written`]);

  const unfinished = await read(buildTestCapture(session.declarations, session.frames, { end: false }), 'live.vor');
  assert.equal(unfinished.frames, 40);
  assert.equal(unfinished.truncated, true);
  assert.equal(unfinished.status[0], 'warn');

  const complete = await read(capture, 'run.vor');
  assert.equal(complete.truncated, false);
  assert.deepEqual(complete.status, ['info', 'run.vor: 40 frames']);
});

test('websocket: after close() (another capture opened) late bytes never reach the sink', async () => {
  let release;
  const gate = new Promise((r) => { release = r; });
  await withServer(async (ws) => { await gate; ws.send(capture); ws.send(JSON.stringify({ type: 'end' })); }, async (url) => {
    const sink = recordingSink();
    const events = [];
    const s = connectCaptureStream({ url, decoder: createCaptureDecoder(), sink, name: 'old.vor', WebSocketImpl: BrowserWebSocket, onEvent: (k) => events.push(k) });
    await waitFor(() => events.includes('open'));
    s.close();
    release();
    await waitFor(() => events.includes('close'));
    assert.equal(sink.frames.length, 0);
    assert.equal(s.stats().state, 'closed');
  });
});
