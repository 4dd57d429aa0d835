// server_range.test.mjs - random access to captures over HTTP (native/server/http_range.c):
// GET /api/captures/<id>/index, frames, tail and bytes, against the real server and captures
// written by vor's writer (vor_make_capture). Every stream the server sends is decoded by the
// C reader (capture_dump) and must read exactly as the same frames of the whole file read:
// values whose records say "unchanged" included (the state record, docs/FORMAT.md 4.8). Also:
// a response stops at 4 MiB and says where to go on; the tail needs no index; a capture that
// grows is indexed as it grows; a new run of the file is refused to a viewer of the old one
// (409, reset) and starts the index over (new generation); a 1.0 capture lists its frames but
// refuses ranges; bad requests are refused with a reason.
//
// Run: node tests/server/server_range.test.mjs HOST_BIN MAKE_CAPTURE CAPTURE_DUMP DATA_DIR
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeTmp, sleep, startServer } from './server_harness.mjs';

const [, , , makeCapture, captureDump, dataDir] = process.argv;
const root = makeTmp('range');
let srv, base;
const whole = {}; // name -> frames (JSON lines of capture_dump --full), by index

function dump(file) {
  const out = execFileSync(captureDump, ['--full', file], { maxBuffer: 1 << 30 }).toString();
  return out.trim().split('\n').map((l) => JSON.parse(l));
}
function dumpBytes(bytes) {
  const f = path.join(root, `part-${process.hrtime.bigint()}.vor`);
  fs.writeFileSync(f, bytes);
  const lines = dump(f);
  fs.rmSync(f);
  return { frames: lines.slice(0, -1), end: lines[lines.length - 1].end };
}
// One connection per request (no keep-alive): a connection left idle while capture_dump runs
// may be closed by the server just as a pooling client reuses it.
function get(p) {
  return new Promise((resolve, reject) => {
    http.get(base + p, { agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ res: { status: res.statusCode, headers: { get: (k) => res.headers[k] ?? null } }, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', (err) => reject(new Error(`${p}: ${err.message}`)));
  });
}
function parseIndex(b) {
  assert.equal(b.toString('latin1', 0, 4), 'VIDX');
  const u32 = (o) => b.readUInt32LE(o), u64 = (o) => Number(b.readBigUInt64LE(o));
  const n = u32(24);
  const ix = {
    flags: u32(8), stride: u32(12), count: u32(16), first: u32(20), n,
    frames: u64(32), bytesIndexed: u64(40), fileBytes: u64(48), generation: u64(56),
    index: [], start: [], min: [], max: [], sum: [], nframes: [], flame: [],
  };
  let o = 72;
  for (let i = 0; i < n; i++) ix.index.push(b.readDoubleLE(o + 8 * i));
  o += 8 * n;
  for (let i = 0; i < n; i++) ix.start.push(b.readDoubleLE(o + 8 * i));
  o += 8 * n;
  for (const k of ['min', 'max', 'sum']) { for (let i = 0; i < n; i++) ix[k].push(b.readFloatLE(o + 4 * i)); o += 4 * n; }
  for (const k of ['nframes', 'flame']) { for (let i = 0; i < n; i++) ix[k].push(b.readUInt32LE(o + 4 * i)); o += 4 * n; }
  return ix;
}
async function index(id, from = 0) {
  const { res, body } = await get(`/api/captures/${id}/index?from=${from}`);
  assert.equal(res.status, 200, body.toString());
  return parseIndex(body);
}

before(async () => {
  const caps = path.join(root, 'caps');
  fs.mkdirSync(caps);
  // small: 3,000 frames (about 1 KB each); big: 9,000 frames with 400 scopes (over 4 MiB)
  execFileSync(makeCapture, [path.join(caps, 'a-small.vor'), '--frames', '3000', '--spike-at', '1234', '--every', '2']);
  execFileSync(makeCapture, [path.join(caps, 'b-big.vor'), '--frames', '9000', '--scopes', '400']);
  fs.copyFileSync(path.join(dataDir, 'capture-1.0.vor'), path.join(caps, 'c-old.vor'));
  for (const n of ['a-small', 'b-big']) {
    const lines = dump(path.join(caps, `${n}.vor`));
    whole[n] = lines.slice(0, -1);
  }
  srv = await startServer([caps]);
  base = `http://127.0.0.1:${srv.port}`;
});
after(async () => {
  await srv?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const idOf = async (name) => {
  const list = JSON.parse((await get('/api/captures')).body);
  return list.captures.find((c) => c.name === name).id;
};

test('the index lists every frame: its index, start, frame time and whether it has scopes', async () => {
  const id = await idOf('a-small.vor');
  let ix = await index(id);
  for (let i = 0; i < 200 && !(ix.flags & 4); i++) { await sleep(20); ix = await index(id); }
  assert.equal(ix.flags & 7, 7, 'end record read, random access, whole file indexed');
  assert.equal(ix.stride, 1);
  assert.equal(ix.count, 3000);
  assert.equal(ix.frames, 3000);
  const f = whole['a-small'];
  for (const i of [0, 1, 1234, 2999]) {
    assert.equal(ix.index[i], f[i].index);
    assert.equal(ix.start[i], f[i].start);
    assert.ok(Math.abs(ix.max[i] - f[i].duration) <= 1, `frame time of ${i}`);
    assert.equal(ix.flame[i], i % 2 === 0 ? 1 : 0, 'flame frames on one frame in two');
  }
  assert.ok(Math.abs(ix.max[1234] - 278e6) < 1, 'the spike');
  const tail = await index(id, 2990);
  assert.equal(tail.first, 2990);
  assert.equal(tail.n, 10);
  assert.equal(tail.index[0], 2990);
});

test('frames A..B read exactly as the whole file reads them, from any frame', async () => {
  const id = await idOf('a-small.vor');
  const f = whole['a-small'];
  for (const [a, b] of [[0, 9], [777, 800], [1233, 1235], [2990, 2999]]) {
    const { res, body } = await get(`/api/captures/${id}/frames?from=${a}&to=${b}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-vor-first-frame'), String(a));
    assert.equal(res.headers.get('x-vor-next-frame'), null, 'a small range is whole');
    const got = dumpBytes(body);
    assert.deepEqual(got.end.damage, []);
    assert.ok(got.frames.length >= b - a + 1);
    for (const fr of got.frames) assert.deepEqual(fr, f[fr.index], `frame ${fr.index}`);
  }
});

test('a range past 4 MiB stops at a record boundary and says where to go on', async () => {
  const id = await idOf('b-big.vor');
  const f = whole['b-big'];
  let from = 0, seen = 0, parts = 0;
  for (;;) {
    const { res, body } = await get(`/api/captures/${id}/frames?from=${from}&to=8999`);
    assert.equal(res.status, 200);
    assert.ok(body.length <= 4 * 1024 * 1024, `response of ${body.length} bytes`);
    const got = dumpBytes(body);
    for (const fr of got.frames) { assert.deepEqual(fr, f[fr.index]); assert.equal(fr.index, seen); seen++; }
    parts++;
    const next = res.headers.get('x-vor-next-frame');
    if (!next) break;
    assert.equal(Number(next), seen);
    from = Number(next);
  }
  assert.equal(seen, 9000);
  assert.ok(parts >= 3, `${parts} parts`);
});

test('the tail: the newest frames without waiting for the index, then bytes to follow', async () => {
  const id = await idOf('b-big.vor');
  const f = whole['b-big'];
  const { res, body } = await get(`/api/captures/${id}/tail?bytes=100000`);
  assert.equal(res.status, 200);
  const size = fs.statSync(path.join(root, 'caps', 'b-big.vor')).size;
  assert.equal(Number(res.headers.get('x-vor-end')), size);
  const got = dumpBytes(body);
  assert.ok(got.frames.length > 10 && got.frames.length < 100, `${got.frames.length} frames`);
  assert.equal(got.frames[got.frames.length - 1].index, 8999);
  for (const fr of got.frames) assert.deepEqual(fr, f[fr.index]);
  assert.equal(got.end.finished, true);
  const more = await get(`/api/captures/${id}/bytes?from=${size}&header=${res.headers.get('x-vor-header')}`);
  assert.equal(more.res.status, 200);
  assert.equal(more.body.length, 0, 'nothing after the end');
});

test('a capture that grows is indexed as it grows; a new run is refused to the old viewer', async () => {
  const caps = path.join(root, 'caps');
  const src = fs.readFileSync(path.join(caps, 'a-small.vor'));
  const live = path.join(caps, 'd-live.vor');
  const offsets = recordOffsets(src);
  fs.writeFileSync(live, src.subarray(0, offsets[1000] + 7)); // 1,000 frames and a torn record
  const id = await idOf('d-live.vor');
  let ix = await index(id);
  for (let i = 0; i < 100 && ix.frames < 1000; i++) { await sleep(20); ix = await index(id); }
  assert.equal(ix.frames, 1000);
  assert.equal(ix.flags & 1, 0, 'no end record yet');
  const g = ix.generation;
  const tail = await get(`/api/captures/${id}/tail?bytes=20000`);
  const endAt = Number(tail.res.headers.get('x-vor-end'));
  assert.equal(endAt, offsets[1000], 'the tail stops before the torn record');
  fs.appendFileSync(live, src.subarray(offsets[1000] + 7, offsets[2000]));
  for (let i = 0; i < 100 && ix.frames < 2000; i++) { await sleep(20); ix = await index(id); }
  assert.equal(ix.frames, 2000, 'the frames appended are indexed');
  assert.equal(ix.generation, g);
  const head = tail.res.headers.get('x-vor-header');
  const follow = await get(`/api/captures/${id}/bytes?from=${endAt}&header=${head}`);
  assert.equal(follow.res.status, 200);
  assert.deepEqual(follow.body, src.subarray(offsets[1000], offsets[2000]));
  // a new run rewrites the file in place: another header
  const other = fs.readFileSync(path.join(caps, 'b-big.vor'));
  fs.writeFileSync(live, other.subarray(0, 300000));
  const refused = await get(`/api/captures/${id}/bytes?from=${offsets[2000]}&header=${head}`);
  assert.equal(refused.res.status, 409);
  assert.ok(['replaced', 'truncated'].includes(JSON.parse(refused.body).reset));
  ix = await index(id);
  assert.notEqual(ix.generation, g, 'the index starts over');
});

test('a 1.0 capture: its index, but no ranges; bad requests are refused with a reason', async () => {
  const id = await idOf('c-old.vor');
  const ix = await index(id);
  assert.equal(ix.flags & 2, 0, 'no random access');
  assert.ok(ix.count > 0);
  const r = await get(`/api/captures/${id}/frames?from=0&to=5`);
  assert.equal(r.res.status, 409);
  assert.match(JSON.parse(r.body).error, /format 1\.0/);
  for (const [p, status] of [[`/api/captures/${id}/nope`, 404], ['/api/captures/999/index', 404],
    [`/api/captures/${id}/frames?from=x`, 400], [`/api/captures/${id}/frames?from=9&to=3`, 400]]) {
    const res = await get(p);
    assert.equal(res.res.status, status, p);
    assert.ok(JSON.parse(res.body).error, p);
  }
});

// Record offsets of a complete 1.1 capture (header, then [u32 size][u16][u32][body] records).
function recordOffsets(b) {
  const hdr = 20 + b.readUInt32LE(12) + 4;
  const out = [];
  for (let at = hdr; at + 10 <= b.length;) { out.push(at); at += 10 + (b.readUInt32LE(at) & 0x7fffffff); }
  return out;
}
