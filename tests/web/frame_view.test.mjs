// Frame view parsing: well-formed views round-trip through the test encoder; malformed or truncated
// views are rejected with an error naming the problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFrameView, FrameViewError, frameViewByteLength, FRAME_VIEW_MAGIC } from '../../web/frame_view.js';
import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

const tree = [{ site: 1, start: 100, dur: 50, children: [{ site: 2, start: 110, dur: 10 }, { site: 3, start: 130, dur: 15 }] }];
const sample = () => encodeFrameView({
  frameIndex: 42, startNs: 100, durationNs: 60, overheadNs: 1.5, droppedScopes: 2,
  values: [[0, 16.5], [9, NaN], [10, Infinity], [11, -Infinity]],
  threads: [{ id: 0, scopes: treeToScopes(tree) }, { id: 7, scopes: [{ start: 105, dur: 20, site: 4, depth: 0 }] }],
});

test('a well-formed view round-trips every field', () => {
  const v = parseFrameView(sample());
  assert.equal(v.version, 1);
  assert.equal(v.frameIndex, 42);
  assert.equal(v.startNs, 100);
  assert.equal(v.durationNs, 60);
  assert.equal(v.overheadNs, 1.5);
  assert.equal(v.droppedScopes, 2);
  assert.equal(v.hasScopes, true);
  assert.deepEqual([...v.columnIds], [0, 9, 10, 11]);
  assert.equal(v.values[0], 16.5);
  assert.ok(Number.isNaN(v.values[1]));
  assert.equal(v.values[2], Infinity);
  assert.equal(v.values[3], -Infinity);
  assert.deepEqual([...v.threadIds], [0, 7]);
  assert.deepEqual([...v.threadScopeCounts], [3, 1]);
  assert.deepEqual([...v.threadFirst], [0, 3]);
  assert.equal(v.nScopes, 4);
  // end order: children before the parent
  assert.deepEqual([...v.scopeSite], [2, 3, 1, 4]);
  assert.deepEqual([...v.scopeDepth], [1, 1, 0, 0]);
  assert.deepEqual([...v.scopeStart], [110, 130, 100, 105]);
  assert.deepEqual([...v.scopeDuration], [10, 15, 50, 20]);
});

test('the layout size formula matches what the encoder writes (padding to 8 bytes)', () => {
  for (const [nv, nt, ns] of [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 3], [3, 3, 10]]) {
    const threads = Array.from({ length: nt }, (_, i) => ({ id: i, scopes: i === 0 ? Array.from({ length: ns }, (_, k) => ({ start: k, dur: 1, site: 1, depth: 0 })) : [] }));
    const b = encodeFrameView({ values: Array.from({ length: nv }, (_, i) => [i, i]), threads, scopesPresent: true });
    assert.equal(b.byteLength, frameViewByteLength(nv, nt, nt ? ns : 0));
    assert.equal(b.byteLength % 8, 0);
  }
});

test('a metrics-only frame has no scopes', () => {
  const v = parseFrameView(encodeFrameView({ frameIndex: 1, durationNs: 5, values: [[0, 1]] }));
  assert.equal(v.hasScopes, false);
  assert.equal(v.nScopes, 0);
  assert.equal(v.scopeStart.length, 0);
});

test('accepts an ArrayBuffer, an unaligned slice of a larger buffer, and ignores bytes after total_bytes', () => {
  const b = sample();
  assert.equal(parseFrameView(b.buffer).frameIndex, 42);
  const big = new Uint8Array(b.byteLength + 11);
  big.set(b, 3);
  const v = parseFrameView(big.subarray(3));
  assert.equal(v.frameIndex, 42);
  assert.deepEqual([...v.scopeDuration], [10, 15, 50, 20]);
});

test('the parser copies: reusing the input buffer afterwards does not change the view', () => {
  const b = sample();
  const v = parseFrameView(b);
  b.fill(0);
  assert.deepEqual([...v.scopeStart], [110, 130, 100, 105]);
  assert.equal(v.values[0], 16.5);
});

function rejects(bytes, pattern) {
  assert.throws(() => parseFrameView(bytes), (err) => {
    assert.ok(err instanceof FrameViewError, `expected FrameViewError, got ${err}`);
    assert.match(err.message, pattern);
    assert.match(err.message, /^frame view: /);
    return true;
  });
}

test('rejects input shorter than the header', () => {
  rejects(new Uint8Array(0), /truncated: 0 bytes, the header alone needs 64/);
  rejects(sample().subarray(0, 63), /truncated: 63 bytes/);
});

test('rejects a view cut anywhere after the header', () => {
  const b = sample();
  for (const cut of [64, 80, 100, b.byteLength - 1]) rejects(b.subarray(0, cut), /truncated: \d+ bytes given, total_bytes says/);
});

test('rejects bad magic and unknown versions', () => {
  rejects(encodeFrameView({ corrupt: { magic: 0x12345678 } }), /bad magic 0x12345678 \(expected 0x4D524656/);
  rejects(encodeFrameView({ corrupt: { version: 2 } }), /unsupported version 2/);
  assert.equal(FRAME_VIEW_MAGIC, 0x4d524656);
});

test('rejects total_bytes that disagrees with the counts', () => {
  rejects(encodeFrameView({ values: [[0, 1]], corrupt: { totalBytes: 72 } }), /total_bytes 72 does not match the layout \(1 values, 0 threads, 0 scopes need 80 bytes\)/);
  // n_scopes larger than the arrays present
  const b = encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }] }], corrupt: { nScopes: 1000000 } });
  rejects(b, /does not match the layout/);
});

test('rejects a thread table that does not add up to n_scopes', () => {
  const good = encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }, { start: 2, dur: 1, site: 1, depth: 0 }] }] });
  const dv = new DataView(good.buffer);
  dv.setUint32(64 + 4, 1, true); // thread says 1 scope, header says 2
  rejects(good, /thread table counts 1 scopes but n_scopes is 2/);
});

test('rejects scopes when the scopes-present flag is clear', () => {
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }] }], corrupt: { flags: 0 } }), /flags bit0 .* clear but n_scopes is 1/);
});

test('rejects non-finite header times and bad scope durations', () => {
  rejects(encodeFrameView({ durationNs: NaN }), /duration_ns NaN/);
  rejects(encodeFrameView({ durationNs: -1 }), /duration_ns -1/);
  rejects(encodeFrameView({ startNs: Infinity }), /start_ns Infinity/);
  rejects(encodeFrameView({ frameIndex: -3 }), /frame_index -3/);
  rejects(encodeFrameView({ overheadNs: NaN }), /overhead_ns NaN/);
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: -5, site: 1, depth: 0 }] }] }), /scope 0: duration_ns -5/);
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [{ start: NaN, dur: 5, site: 1, depth: 0 }] }] }), /scope 0: start_ns NaN/);
});

test('rejects things that are not bytes', () => {
  rejects(null, /expected an ArrayBuffer or Uint8Array, got null/);
  rejects('VFRM', /got string/);
});

test('a view inside shared wasm memory (SharedArrayBuffer, pthreads builds) is copied out', () => {
  const b = sample();
  const mem = new Uint8Array(new SharedArrayBuffer(b.byteLength + 5));
  mem.set(b, 5);
  const v = parseFrameView(mem.subarray(5));
  assert.equal(v.frameIndex, 42);
  assert.deepEqual([...v.scopeDuration], [10, 15, 50, 20]);
  assert.ok(!(v.scopeStart.buffer instanceof SharedArrayBuffer), 'nothing the panel keeps aliases wasm memory');
});
