// server_harness.mjs - shared helpers for the node tests of the vor server.
//
// Each test file starts the real server (tests/server/server_host.c, the same calls `vor serve`
// makes) as a child process on an ephemeral port of 127.0.0.1 and talks to it with node's own
// HTTP/TCP and the `ws` client. Raw TCP is used wherever a client library would normalise the
// request (path traversal attempts) or would not misbehave the way a test needs (a viewer that
// never reads). The host binary comes from argv[2] or VOR_SERVER_HOST_BIN.
import { spawn } from 'node:child_process';
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

/** Starts the server; resolves once it printed "READY <port>". */
export async function startServer(args, env = {}) {
  const child = spawn(HOST_BIN, ['--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
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

/** Sends `request` verbatim on a fresh TCP connection; resolves with the parsed response. */
export function rawHttp(port, request, timeoutMs = 5000 * SLOW) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
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

export function get(port, pathText, extra = '') {
  return rawHttp(port, `GET ${pathText} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`);
}

/**
 * A websocket viewer collecting everything: binary messages (concatenated) and text messages
 * (parsed JSON). `done` resolves at close with {code, reason, data, texts}.
 */
export function viewer(url, { protocol = 'vor-capture', origin } = {}) {
  const options = origin ? { origin } : {};
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

/** A viewer that completes the websocket handshake and then never reads another byte. */
export function stalledViewer(port, pathText) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
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
