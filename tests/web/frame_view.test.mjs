// Frame view parsing: well-formed views round-trip through the test encoder; malformed or truncated
// views are rejected with an error naming the problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseFrameView, FrameViewError, frameViewByteLength, FRAME_VIEW_MAGIC, PARENT_NONE, PARENT_UNKNOWN,
  SCOPE_FLAG_OPEN, SCOPE_FLAG_UNWOUND,
} from '../../web/frame_view.js';
import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

const tree = [{ site: 1, start: 100, dur: 50, children: [{ site: 2, start: 110, dur: 10 }, { site: 3, start: 130, dur: 15 }] }];
const sample = () => encodeFrameView({
  frameIndex: 42, startNs: 100, durationNs: 60, overheadNs: 1.5, droppedScopes: 2,
  values: [[0, 16.5], [9, NaN], [10, Infinity], [11, -Infinity]],
  threads: [{ id: 0, scopes: treeToScopes(tree) }, { id: 7, scopes: [{ start: 105, dur: 20, site: 4, depth: 0 }] }],
});

test('a well-formed view round-trips every field', () => {
  const v = parseFrameView(sample());
  assert.equal(v.version, 2);
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
  // parents as indices into the arrays; depth 0 has none
  assert.deepEqual([...v.scopeParent], [2, 2, PARENT_NONE, PARENT_NONE]);
  assert.deepEqual([...v.scopeFlags], [0, 0, 0, 0]);
  assert.equal(v.nOpen, 0);
  assert.deepEqual([...v.threadOpenCounts], [0, 0]);
  assert.equal(v.nDrops, 0);
});

// A thread inside a scope that began frames ago (open at the frame's end), a child closed by an
// unwind, a second thread with only an open scope, and drops by cause.
const withOpen = () => encodeFrameView({
  frameIndex: 9, startNs: 1000, durationNs: 1000, droppedScopes: 5,
  drops: [[1, 0, 5], [6, 0, 7]],
  threads: [
    { id: 0,
      scopes: [
        { start: 1100, dur: 100, site: 3, depth: 2, parent: 2 },
        { start: 1300, dur: 50, site: 4, depth: 2, parent: 2, flags: SCOPE_FLAG_UNWOUND },
        { start: 1050, dur: 400, site: 2, depth: 1, parent: 3 },
      ],
      open: [{ start: 500, dur: 1500, site: 1 }] },
    { id: 0xffffffff, scopes: [], open: [{ start: 800, dur: 1200, site: 0xffffffff }] },
  ],
});

test('version 2: open scopes after each thread\'s ended ones, parents, flags and drops', () => {
  const v = parseFrameView(withOpen());
  assert.equal(v.nScopes, 3); // ended, as the panel counts them
  assert.equal(v.nOpen, 2);
  assert.deepEqual([...v.threadIds], [0, 0xffffffff]);
  assert.deepEqual([...v.threadScopeCounts], [3, 0]);
  assert.deepEqual([...v.threadOpenCounts], [1, 1]);
  assert.deepEqual([...v.threadFirst], [0, 4]);
  assert.deepEqual([...v.scopeSite], [3, 4, 2, 1, 0xffffffff]);
  assert.deepEqual([...v.scopeDepth], [2, 2, 1, 0, 0]);
  assert.deepEqual([...v.scopeParent], [2, 2, 3, PARENT_NONE, PARENT_NONE]);
  assert.deepEqual([...v.scopeFlags], [0, SCOPE_FLAG_UNWOUND, 0, SCOPE_FLAG_OPEN, SCOPE_FLAG_OPEN]);
  assert.deepEqual([...v.scopeDuration], [100, 50, 400, 1500, 1200]);
  assert.equal(v.droppedScopes, 5);
  assert.equal(v.nDrops, 2);
  assert.deepEqual([...v.dropCause], [1, 6]);
  assert.deepEqual([...v.dropThread], [0, 0]);
  assert.deepEqual([...v.dropCount], [5, 7]);
  // Walking threadFirst .. + threadScopeCounts (as version-1 callers do) gives the ended scopes only.
  const ended = [];
  for (let t = 0; t < v.threadIds.length; t++) {
    for (let i = v.threadFirst[t]; i < v.threadFirst[t] + v.threadScopeCounts[t]; i++) ended.push(v.scopeSite[i]);
  }
  assert.deepEqual(ended, [3, 4, 2]);
});

test('a parent index is per thread in the bytes, into the arrays once parsed', () => {
  const b = encodeFrameView({
    threads: [
      { id: 1, scopes: [{ start: 0, dur: 1, site: 1, depth: 0, parent: PARENT_NONE }] },
      { id: 2, scopes: [{ start: 0, dur: 1, site: 2, depth: 1, parent: 1 }, { start: 0, dur: 5, site: 3, depth: 0, parent: PARENT_NONE }] },
      { id: 3, scopes: [{ start: 0, dur: 1, site: 4, depth: 1 }] },
    ],
  });
  const v = parseFrameView(b);
  assert.deepEqual([...v.scopeParent], [PARENT_NONE, 2, PARENT_NONE, PARENT_UNKNOWN]);
});

test('a metrics-only view keeps its drops', () => {
  const v = parseFrameView(encodeFrameView({ frameIndex: 3, values: [[0, 1]], drops: [[3, 7, 12]], droppedScopes: 12 }));
  assert.equal(v.hasScopes, false);
  assert.equal(v.nDrops, 1);
  assert.deepEqual([v.dropCause[0], v.dropThread[0], v.dropCount[0]], [3, 7, 12]);
});

test('the layout size formula matches what the encoder writes (padding to 8 bytes)', () => {
  for (const [nv, nt, ns, nd] of [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 1], [1, 1, 3, 0], [3, 3, 10, 2]]) {
    const threads = Array.from({ length: nt }, (_, i) => ({ id: i, scopes: i === 0 ? Array.from({ length: ns }, (_, k) => ({ start: k, dur: 1, site: 1, depth: 0 })) : [] }));
    const drops = Array.from({ length: nd }, (_, i) => [1, i, 1]);
    const b = encodeFrameView({ values: Array.from({ length: nv }, (_, i) => [i, i]), drops, threads, scopesPresent: true });
    assert.equal(b.byteLength, frameViewByteLength(nv, nt, nt ? ns : 0, nd));
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
  rejects(new Uint8Array(0), /truncated: 0 bytes, the header alone needs 72/);
  rejects(sample().subarray(0, 71), /truncated: 71 bytes/);
});

test('rejects a view cut anywhere after the header', () => {
  const b = sample();
  for (const cut of [72, 80, 100, b.byteLength - 1]) rejects(b.subarray(0, cut), /truncated: \d+ bytes given, total_bytes says/);
});

test('rejects bad magic and unknown versions', () => {
  rejects(encodeFrameView({ corrupt: { magic: 0x12345678 } }), /bad magic 0x12345678 \(expected 0x4D524656/);
  rejects(encodeFrameView({ corrupt: { version: 1 } }), /unsupported version 1 \(this panel reads version 2\)/);
  assert.equal(FRAME_VIEW_MAGIC, 0x4d524656);
});

test('rejects total_bytes that disagrees with the counts', () => {
  rejects(encodeFrameView({ values: [[0, 1]], corrupt: { totalBytes: 80 } }), /total_bytes 80 does not match the layout \(1 values, 0 drops, 0 threads, 0 \+ 0 open scopes need 88 bytes\)/);
  // n_scopes larger than the arrays present
  const b = encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }] }], corrupt: { nScopes: 1000000 } });
  rejects(b, /does not match the layout/);
});

test('rejects a thread table that does not add up to n_scopes', () => {
  const good = encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }, { start: 2, dur: 1, site: 1, depth: 0 }] }] });
  const dv = new DataView(good.buffer);
  dv.setUint32(72 + 4, 1, true); // thread says 1 scope, header says 2
  rejects(good, /thread table counts 1 scopes and 0 open but n_scopes is 2 and n_open 0/);
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [], open: [{ start: 0, dur: 1, site: 1 }] }], corrupt: { nOpen: 0, totalBytes: 72 + 16 } }),
    /thread table counts 0 scopes and 1 open but n_scopes is 0 and n_open 0/);
});

test('rejects scopes when the scopes-present flag is clear', () => {
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 0 }] }], corrupt: { flags: 0 } }), /flags bit0 .* clear but n_scopes is 1 and n_open 0/);
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [], open: [{ start: 0, dur: 1, site: 1 }] }], corrupt: { flags: 0 } }), /clear but n_scopes is 0 and n_open 1/);
});

test('rejects a parent outside its thread and a bad drop count', () => {
  rejects(encodeFrameView({ threads: [{ id: 0, scopes: [{ start: 0, dur: 1, site: 1, depth: 1, parent: 1 }] }] }),
    /scope 0: parent 1 is outside its thread's 1 scopes/);
  rejects(encodeFrameView({ drops: [[1, 0, -1]] }), /drop 0: count -1/);
  rejects(encodeFrameView({ drops: [[1, 0, NaN]] }), /drop 0: count NaN/);
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
