// store_harness.mjs - helpers for the profile store's tests: real captures (written by the
// training_loop example, natively), an uploader that speaks the vor-upload protocol with the `ws`
// client, the record boundaries of a 1.1 capture (to say where "its last complete record" is),
// and polling the index until the indexer caught up.
//
// Paths come from the environment that tests/store/CMakeLists.txt sets: VOR_SERVER_HOST_BIN (the
// server, as in tests/server), VOR_BIN (the vor command), VOR_TRAINING_LOOP (a program to record).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { SLOW, sleep, withTimeout } from '../server/server_harness.mjs';

export const VOR_BIN = process.env.VOR_BIN;
export const TRAINING_LOOP = process.env.VOR_TRAINING_LOOP;

/** Records `steps` steps of the training loop (flame frames) into dir/name; returns its bytes. */
export function recordCapture(dir, name, steps = 60, env = {}) {
  const file = path.join(dir, name);
  execFileSync(TRAINING_LOOP, [String(steps)], {
    env: { ...process.env, VOR_RECORD: file, VOR_RECORD_FLAME: '1', ...env }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  return fs.readFileSync(file);
}

/** Offsets where the records of a 1.1 capture end (the header's end first). */
export function recordEnds(buf) {
  const body = buf.readUInt32LE(12);
  let at = 20 + body + 4;
  const ends = [at];
  while (at + 10 <= buf.length) {
    const n = buf.readUInt32LE(at) & 0x7fffffff;
    if (at + 10 + n > buf.length) break;
    at += 10 + n;
    ends.push(at);
  }
  return ends;
}

/** The largest record boundary at or below `bytes`. */
export function lastWholeRecord(buf, bytes) {
  return recordEnds(buf).filter((e) => e <= bytes).pop() ?? 0;
}

export const randomKey = () => crypto.randomBytes(12).toString('hex');

/**
 * An uploader: sends the hello, then (on the offset answer) the bytes from that offset in
 * `chunk`-sized messages. Resolves `done` at close with {code, reason, messages, offset}.
 * opts.stopAt: stop sending at that many bytes and destroy the socket (a killed uploader), or with
 * opts.hold keep the connection open without sending more (a stalled uploader). opts.pace: ms
 * between messages (a trickling uploader); sending stops when the socket closes.
 */
export function upload(url, data, hello, { chunk = 64 * 1024, stopAt, finish = false, origin, pace, hold = false } = {}) {
  const ws = new WebSocket(`${url}/upload`, 'vor-upload', origin ? { origin } : {});
  const messages = [];
  let offset = null;
  const done = new Promise((resolve) => {
    // hello null: the bytes come first (a client that skips the hello).
    ws.on('open', () => ws.send(hello ? JSON.stringify({ type: 'hello', ...hello }) : data.subarray(0, 100)));
    ws.on('message', async (m, isBinary) => {
      if (isBinary) return;
      const msg = JSON.parse(m.toString());
      messages.push(msg);
      if (msg.type !== 'offset') return;
      offset = msg.bytes;
      const end = stopAt ?? data.length;
      for (let i = msg.bytes; i < end; i += chunk) {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(data.subarray(i, Math.min(end, i + chunk)));
        if (pace) await sleep(pace);
      }
      if (hold) return;
      if (stopAt !== undefined) {
        // Wait until the kernel took it all, then vanish without a close frame.
        while (ws.bufferedAmount > 0) await sleep(5);
        await sleep(50);
        ws._socket.destroy();
        return;
      }
      if (finish) ws.send(JSON.stringify({ type: 'finish' }));
    });
    ws.on('error', () => {});
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString(), messages, offset }));
  });
  return { ws, done };
}

/** GET /api/captures?query as JSON. */
export async function search(srv, query = '', headers = {}) {
  const res = await fetch(`${srv.http}/api/captures${query ? `?${query}` : ''}`, { headers });
  return { status: res.status, body: await res.json() };
}

/** Polls until every listed stored capture matching `query` is indexed (and there are `count`). */
export async function waitIndexed(srv, query = '', count = 1, ms = 20000 * SLOW) {
  return withTimeout((async () => {
    for (;;) {
      const { body } = await search(srv, query);
      const stored = (body.captures || []).filter((c) => c.stored);
      if (stored.length >= count && stored.every((c) => c.indexed && c.upload !== 'uploading')) return stored;
      await sleep(50);
    }
  })(), ms, `index of ${count} capture(s) for '${query}'`);
}

/** The stored bytes of a capture (the server's file under its store directory). */
export function storedBytes(storeDir, id) {
  return fs.readFileSync(path.join(storeDir, 'captures', `${id}.vor`));
}

export function storedFiles(storeDir) {
  const dir = path.join(storeDir, 'captures');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

/** A TCP port free on 127.0.0.1 now (a server restarted on the same port keeps its clients' URL). */
export async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
