// server_harness.mjs - shared helpers for the node tests of the vor server.
//
// Each test file starts the real server (tests/server/server_host.c, the same calls `vor serve`
// makes) as a child process on an ephemeral port of 127.0.0.1 and talks to it with node's own
// HTTP/TCP and the `ws` client. Raw TCP is used wherever a client library would normalise the
// request (path traversal attempts) or would not misbehave the way a test needs (a viewer that
// never reads). The host binary comes from argv[2] or VOR_SERVER_HOST_BIN.
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

export const HOST_BIN = process.env.VOR_SERVER_HOST_BIN || process.argv[2];
/**
 * How much slower than a plain build the server may be: VOR_TEST_SLOW (a factor, set by
 * tests/server/CMakeLists.txt for sanitizer builds), else 1. Multiplies the hang-detecting
 * timeouts here and the latency bounds of the tests that are not about the latency itself.
 */
export const SLOW = Math.max(1, Number(process.env.VOR_TEST_SLOW) || 1);
export const MAGIC = Buffer.from([0x89, 0x56, 0x4f, 0x52, 0x0d, 0x0a, 0x1a, 0x0a]);

if (!HOST_BIN || !fs.existsSync(HOST_BIN)) {
  console.error('usage: node <test>.mjs <path to test_server_host>');
  process.exit(2);
}

export function makeTmp(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vor-server-${prefix}-`));
}

/** A synthetic capture: the magic, then `bytes` random bytes (the server never parses records). */
export function captureBytes(bytes) {
  return Buffer.concat([MAGIC, crypto.randomBytes(bytes)]);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts the server; resolves once it printed "READY <port>". `nofile`: run it with that many
 * file descriptors at most (`ulimit -n`, soft and hard).
 */
export async function startServer(args, env = {}, { nofile } = {}) {
  const argv = ['--port', '0', ...args];
  const child = nofile
    ? spawn('/bin/sh', ['-c', `ulimit -n ${Number(nofile)} && exec "$0" "$@"`, HOST_BIN, ...argv],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    : spawn(HOST_BIN, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in ${10 * SLOW} s: ${stderr}`)), 10000 * SLOW);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
  return {
    child,
    port,
    http: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}`,
    stderr: () => stderr,
    /** SIGTERM (what Ctrl-C/kill do to `vor serve`), then the exit status and how long it took. */
    async stop(timeoutMs = 10000 * SLOW) {
      const t0 = performance.now();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const r = await exited;
      clearTimeout(timer);
      return { ...r, ms: performance.now() - t0, stderr };
    },
  };
}

/**
 * Sends `request` verbatim on a fresh TCP connection; resolves with the parsed response.
 * localAddress: the client's own address (any of 127.0.0.0/8 stands for another machine).
 */
export function rawHttp(port, request, timeoutMs = 5000 * SLOW, localAddress = undefined) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    const parts = [];
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`no response to ${JSON.stringify(request)}`)); }, timeoutMs);
    sock.on('data', (d) => parts.push(d));
    sock.on('error', () => {});
    sock.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(parts);
      const sep = all.indexOf('\r\n\r\n');
      if (sep < 0) return resolve({ status: null, headers: {}, body: all, raw: all });
      const head = all.subarray(0, sep).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0])?.[1] ?? NaN);
      const headers = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status, headers, body: all.subarray(sep + 4), raw: all });
    });
    sock.write(request);
  });
}

export function get(port, pathText, extra = '', { localAddress, timeoutMs } = {}) {
  return rawHttp(port, `GET ${pathText} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`,
    timeoutMs ?? 5000 * SLOW, localAddress);
}

/**
 * A websocket viewer collecting everything: binary messages (concatenated) and text messages
 * (parsed JSON). `done` resolves at close with {code, reason, data, texts}.
 */
export function viewer(url, { protocol = 'vor-capture', origin, localAddress } = {}) {
  const options = { ...(origin ? { origin } : {}), ...(localAddress ? { localAddress } : {}) };
  const ws = protocol ? new WebSocket(url, protocol, options) : new WebSocket(url, options);
  const chunks = [];
  const texts = [];
  let bytes = 0;
  let errorText = null;
  const opened = new Promise((resolve) => {
    ws.on('open', () => resolve(true));
    ws.on('close', () => resolve(false));
  });
  const done = new Promise((resolve) => {
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        chunks.push(data);
        bytes += data.length;
      } else {
        texts.push(JSON.parse(data.toString()));
      }
    });
    ws.on('error', (e) => { errorText = e.message; });
    ws.on('close', (code, reason) =>
      resolve({ code, reason: reason.toString(), data: Buffer.concat(chunks), texts, error: errorText }));
  });
  return { ws, opened, done, bytes: () => bytes, texts };
}

/**
 * Milliseconds until a new viewer of `url` receives its first bytes (then it closes); rejects
 * when it is refused instead.
 */
export async function firstBytesMs(url, { localAddress } = {}) {
  const t0 = performance.now();
  const v = viewer(url, { localAddress });
  await withTimeout((async () => {
    while (v.bytes() === 0) {
      const done = await Promise.race([v.done, sleep(2).then(() => null)]);
      if (done) throw new Error(`refused: ${done.code} ${done.reason}`);
    }
  })(), 5000, 'first bytes');
  const ms = performance.now() - t0;
  v.ws.close();
  await v.done;
  return ms;
}

/** A viewer that completes the websocket handshake and then never reads another byte. */
export function stalledViewer(port, pathText, { localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    let head = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      head = Buffer.concat([head, d]);
      if (head.indexOf('\r\n\r\n') >= 0) {
        sock.pause(); // stop reading: the kernel buffers fill, then the server's writes would block
        sock.removeAllListeners('data');
        if (!head.toString('latin1').startsWith('HTTP/1.1 101')) reject(new Error('stalled viewer: no upgrade'));
        else resolve(sock);
      }
    });
    sock.write(`GET ${pathText} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      'Sec-WebSocket-Protocol: vor-capture\r\n\r\n');
  });
}

/** Reads a paused socket again: resolves with everything it still had, once the server ended it. */
export function drainUntilEnd(sock, ms, what = 'the server to end the connection') {
  const seen = [];
  sock.on('data', (d) => seen.push(d));
  const ended = new Promise((r) => sock.on('end', r));
  sock.resume();
  return withTimeout(ended, ms, what).then(() => Buffer.concat(seen));
}

/**
 * A websocket upgrade request sent verbatim (any Host/Origin a browser might send); resolves
 * with the status and headers of the answer and closes the connection.
 */
export function rawUpgrade(port, pathText, headers) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('no answer to the upgrade')); }, 5000 * SLOW);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      clearTimeout(timer);
      const lines = head.subarray(0, end).toString('latin1').split('\r\n');
      sock.destroy();
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1] ?? NaN), head: lines.join('\n'),
        body: head.subarray(end + 4).toString() });
    });
    sock.on('close', () => { clearTimeout(timer); resolve({ status: null, head: head.toString('latin1'), body: '' }); });
    sock.write(`GET ${pathText} HTTP/1.1\r\n${headers}Upgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      'Sec-WebSocket-Protocol: vor-capture\r\n\r\n');
  });
}

/**
 * A capture with a real header (docs/FORMAT.md section 2): magic, version 1.0, body length,
 * then a body holding flags, the wall-clock start and the pid, then `bytes` random record bytes.
 */
export function captureWithHeader(bytes, { pid = 1234, wallNs = 1700000000000000000n } = {}) {
  const producer = Buffer.from('vor test');
  const body = Buffer.concat([
    Buffer.from([0]), // flags
    (() => { const b = Buffer.alloc(8); b.writeBigUInt64LE(wallNs); return b; })(),
    Buffer.from([1, producer.length]), producer, // time unit, producer
    Buffer.from([4]), Buffer.from('test'), // process name
    Buffer.from([pid & 0x7f | 0x80, (pid >> 7) & 0x7f]), // pid (varint, < 2^14)
    Buffer.from([1, 0, 8]), Buffer.from('frame_ms'), Buffer.from([2]), Buffer.from('ms'), Buffer.from([0]),
    Buffer.alloc(8),
  ]);
  const fixed = Buffer.alloc(16);
  MAGIC.copy(fixed);
  fixed.writeUInt16LE(1, 8);
  fixed.writeUInt16LE(0, 10);
  fixed.writeUInt32LE(body.length, 12);
  return Buffer.concat([fixed, body, crypto.randomBytes(bytes)]);
}

export async function listCaptures(srv) {
  const r = await fetch(`${srv.http}/api/captures`);
  if (r.status !== 200) throw new Error(`listing: HTTP ${r.status}`);
  return (await r.json()).captures;
}

/** Id of the listed capture whose name is `name`. */
export async function captureId(srv, name) {
  const c = (await listCaptures(srv)).find((e) => e.name === name);
  if (!c) throw new Error(`${name} is not listed`);
  return c.id;
}

/** `promise`, or a rejection after `ms` (times SLOW: this detects hangs, it does not time things). */
export function withTimeout(promise, ms, what) {
  ms *= SLOW;
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms); }),
  ]);
}

const CLK_TCK = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100; } catch { return 100; }
})();

/** CPU time (user + system, seconds) process `pid` has used so far (/proc/PID/stat). */
export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime (14), stime (15)
}

/** How many file descriptors this process may open (soft limit). */
export function openFileLimit() {
  const m = /Max open files\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : 1024;
}

/**
 * One websocket frame as a client would send it (or should not): opcode, payload, masked unless
 * mask is false, FIN unless fin is false, rsv bits (0..7), and len16 to use the 16-bit length
 * form whatever the size.
 */
export function wsFrame(opcode, payload, { mask = true, fin = true, rsv = 0, len16 = false } = {}) {
  const body = Buffer.from(payload);
  const head = [(fin ? 0x80 : 0) | (rsv << 4) | opcode];
  const m = mask ? 0x80 : 0;
  if (len16 || body.length > 125) {
    if (body.length > 0xffff) throw new Error('wsFrame: 64-bit lengths not needed here');
    head.push(m | 126, body.length >> 8, body.length & 0xff);
  } else {
    head.push(m | body.length);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), body]);
  const key = crypto.randomBytes(4);
  return Buffer.concat([Buffer.from(head), key, Buffer.from(body.map((b, i) => b ^ key[i % 4]))]);
}

/**
 * A websocket client on a raw socket, for frames the `ws` package would never send. Resolves
 * once the server answered the upgrade with 101. frames: every frame the server sent, parsed
 * ({opcode, payload}); closed: resolves when the TCP connection ends, with the close frame's
 * code and reason (null when none came). The client answers nothing unless told to (send()),
 * except a close frame, which it answers as a client should (answerClose: false to not).
 */
export function rawWebSocket(port, pathText, { localAddress, protocol = 'vor-capture', answerClose = true } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    const frames = [];
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const timer = setTimeout(() => { sock.destroy(); reject(new Error('no answer to the upgrade')); }, 5000 * SLOW);
    const closed = new Promise((done) => sock.on('close', () => {
      const close = frames.find((f) => f.opcode === 8);
      done({
        code: close && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : null,
        reason: close ? close.payload.subarray(2).toString() : null,
        frames,
      });
    }));
    function parse() {
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1] & 0x7f;
        let at = 2;
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4; }
        else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); at = 10; }
        if (buf.length < at + len) return;
        const frame = { opcode: buf[0] & 0x0f, fin: !!(buf[0] & 0x80), payload: buf.subarray(at, at + len) };
        frames.push(frame);
        buf = buf.subarray(at + len);
        if (frame.opcode === 8 && answerClose) {
          sock.write(wsFrame(8, frame.payload.subarray(0, 2)));
          sock.end();
        }
      }
    }
    sock.on('error', () => {});
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        clearTimeout(timer);
        const head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        upgraded = true;
        if (!head.startsWith('HTTP/1.1 101')) { sock.destroy(); reject(new Error(`no upgrade: ${head}`)); return; }
        resolve({ sock, frames, closed, send: (b) => sock.write(b) });
      }
      parse();
    });
    sock.write(`GET ${pathText} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      (protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : '') + '\r\n');
  });
}
