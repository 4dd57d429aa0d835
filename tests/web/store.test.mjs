// The frame ring and declarations: bounded history, bounded scopes, bounded metric columns, columns
// and series views.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameStore, Declarations, MAX_DECLARED, MAX_HISTORY_FRAMES, MAX_PLOT_COLUMNS, SCOPES_EVICTED, SCOPES_PRESENT, SCOPES_NONE } from '../../web/store.js';
import { parseFrameView } from '../../web/frame_view.js';
import { encodeFrameView } from './frame_view_encoder.mjs';

const frame = (i, { ms = 16, scopes = 0, values = [] } = {}) => parseFrameView(encodeFrameView({
  frameIndex: i, startNs: i * 1e7, durationNs: ms * 1e6, overheadNs: 1000,
  values: [[0, ms], ...values],
  threads: scopes ? [{ id: 0, scopes: Array.from({ length: scopes }, (_, k) => ({ start: i * 1e7 + k, dur: 1, site: 1, depth: 0 })) }] : [],
}));

function storeWithDecls(opts) {
  const s = new FrameStore(opts);
  s.decls.apply({ columns: [{ id: 0, name: 'frame_ms', unit: 'ms', system: true }, { id: 9, name: 'loss', unit: '' }] });
  return s;
}

test('the ring keeps the last `capacity` frames', () => {
  const s = storeWithDecls({ capacity: 100 });
  for (let i = 0; i < 250; i++) s.push(frame(i, { ms: i }));
  assert.equal(s.size, 100);
  assert.equal(s.first, 150);
  assert.equal(s.end, 250);
  assert.equal(s.frameIndexOf(150), 150);
  assert.equal(s.frameMs(249), 249);
  assert.ok(!s.has(149));
  assert.equal(s.slowestIn(0, 1000), 249);
});

test('capacity limits are enforced (default 10,000, maximum 100,000)', () => {
  assert.equal(new FrameStore().capacity, 10000);
  assert.doesNotThrow(() => new FrameStore({ capacity: MAX_HISTORY_FRAMES }));
  assert.throws(() => new FrameStore({ capacity: MAX_HISTORY_FRAMES + 1 }), /outside 1\.\.100000/);
  assert.throws(() => new FrameStore({ capacity: 0 }), RangeError);
});

test('series views: contiguous runs are subarrays, wrapped runs are copied in order', () => {
  const s = storeWithDecls({ capacity: 10 });
  for (let i = 0; i < 15; i++) s.push(frame(i, { ms: i, values: [[9, i * 2]] }));
  assert.deepEqual([...s.frameMsSeries(5, 15)], [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  assert.deepEqual([...s.frameMsSeries(10, 13)], [10, 11, 12]);
  const col = s.columnSeries(9, 6, 12);
  assert.deepEqual([...col.values], [12, 14, 16, 18, 20, 22]);
  assert.deepEqual([...col.present], [1, 1, 1, 1, 1, 1]);
});

test('a column missing from a frame is absent there, not zero', () => {
  const s = storeWithDecls({ capacity: 10 });
  s.push(frame(0, { values: [[9, 1]] }));
  s.push(frame(1));
  assert.equal(s.columnValue(9, 0), 1);
  assert.equal(s.columnValue(9, 1), undefined);
  assert.deepEqual([...s.columnSeries(9, 0, 2).present], [1, 0]);
});

test('frame_ms comes from its column, or from duration_ns when absent', () => {
  const s = new FrameStore({ capacity: 4 });
  s.push(frame(0, { ms: 20 })); // frame_ms not declared yet: column 0 is a placeholder, duration used
  assert.equal(s.frameMs(0), 20);
  s.decls.apply({ columns: [{ id: 0, name: 'frame_ms', unit: 'ms', system: true }] });
  s.push(parseFrameView(encodeFrameView({ frameIndex: 1, durationNs: 5e6, values: [[0, 7]] })));
  assert.equal(s.frameMs(1), 7);
  s.push(parseFrameView(encodeFrameView({ frameIndex: 2, durationNs: 5e6 })));
  assert.equal(s.frameMs(2), 5);
});

test('undeclared columns get placeholders; plots list system columns first and skip frame_ms', () => {
  const d = new Declarations();
  d.apply({ columns: [{ id: 9, name: 'loss', unit: '' }, { id: 0, name: 'frame_ms', unit: 'ms', system: true }, { id: 1, name: 'memory_mb', unit: 'MB', system: true }] });
  d.ensureColumn(42);
  assert.deepEqual(d.plotColumns().map((c) => c.name), ['memory_mb', 'loss', 'column 42']);
});

test('declarations merge; a thread may be renamed; JSON text is accepted; bad JSON throws', () => {
  const d = new Declarations();
  d.apply('{"threads":[{"id":0,"name":"main"},{"id":3,"name":"w"}],"sites":[{"id":1,"name":"update","function":"update","file":"main.c","line":12}]}');
  d.apply({ threads: [{ id: 3, name: 'loader' }] });
  assert.equal(d.threadName(3), 'loader');
  assert.equal(d.threads.get(3).order, 1, 'renaming keeps the lane order');
  assert.equal(d.sites.get(1).file, 'main.c');
  assert.equal(d.siteName(99), 'site 99');
  assert.throws(() => d.apply('{nope'), SyntaxError);
});

test('scopes are bounded by the scope budget: oldest frames lose their scopes first, metrics stay', () => {
  const s = storeWithDecls({ capacity: 1000, scopeBudget: 250 });
  for (let i = 0; i < 10; i++) s.push(frame(i, { scopes: 100 }));
  assert.ok(s.totalScopes <= 250);
  assert.equal(s.totalScopes, 200);
  assert.equal(s.scopesState(9), SCOPES_PRESENT);
  assert.equal(s.scopesState(8), SCOPES_PRESENT);
  assert.equal(s.scopesState(7), SCOPES_EVICTED);
  assert.equal(s.scopes(7), null);
  assert.equal(s.frameMs(0), 16, 'metrics survive scope eviction');
  assert.equal(s.lastScopeSeq, 9);
});

test('a frame larger than the whole budget keeps no scopes; metrics-only frames have none', () => {
  const s = storeWithDecls({ capacity: 10, scopeBudget: 50 });
  s.push(frame(0, { scopes: 10 }));
  s.push(frame(1, { scopes: 51 }));
  s.push(frame(2));
  assert.equal(s.scopesState(1), SCOPES_EVICTED);
  assert.equal(s.scopesState(0), SCOPES_PRESENT);
  assert.equal(s.scopesState(2), SCOPES_NONE);
  assert.equal(s.totalScopes, 10);
});

test('scopes leaving the ring are released from the budget', () => {
  const s = storeWithDecls({ capacity: 5, scopeBudget: 1000 });
  for (let i = 0; i < 20; i++) s.push(frame(i, { scopes: 10 }));
  assert.equal(s.totalScopes, 50);
});

test('clear() forgets frames and declarations; sequence numbers keep growing', () => {
  const s = storeWithDecls({ capacity: 5 });
  for (let i = 0; i < 3; i++) s.push(frame(i, { values: [[9, 1]] }));
  s.clear();
  assert.equal(s.size, 0);
  assert.equal(s.decls.columns.size, 0);
  const seq = s.push(frame(7));
  assert.equal(s.size, 1);
  assert.equal(s.frameIndexOf(seq), 7);
});

test('at most 64 metric columns are plotted and keep values: memory stays bounded with 4,096 columns', () => {
  const capacity = 2000;
  const s = new FrameStore({ capacity });
  const columns = [{ id: 0, name: 'frame_ms', unit: 'ms', system: true }];
  for (let id = 1; id < 4096; id++) columns.push({ id, name: `m${id}`, unit: '', system: id < 4 });
  s.decls.apply({ columns });
  assert.equal(s.columnData.size, 0, 'declared columns allocate nothing before their first value');
  const values = columns.map((c) => [c.id, c.id + 0.5]);
  for (let i = 0; i < 50; i++) s.push(parseFrameView(encodeFrameView({ frameIndex: i, durationNs: 1e6, values })));
  assert.equal(s.columnData.size, 64, 'only plotted columns hold arrays');
  assert.equal(MAX_PLOT_COLUMNS, 64);
  const plotted = s.plotColumns();
  assert.equal(plotted.length, 64);
  assert.deepEqual(plotted.slice(0, 4).map((c) => c.name), ['m1', 'm2', 'm3', 'm4'], 'system columns first, frame_ms not a plot');
  assert.equal(s.hiddenColumns(), 4095 - 64);
  assert.equal(s.columnValue(64, 10), 64.5);
  assert.equal(s.columnValue(65, 10), undefined, 'a column past the cap keeps no values');
  assert.equal(s.columnSeries(4000, 0, 50), null);
  assert.equal(s.frameMs(10), 0.5, 'frame_ms still feeds the bars');
  s.series(s.frameMsArr, 1990, 2010, 'frameMs'); // a wrapped run: scratch in use
  const bound = capacity * (45 + 8 + 9 * MAX_PLOT_COLUMNS) + 5 * 8 * capacity;
  assert.ok(s.ringBytes() <= bound, `${s.ringBytes()} bytes <= ${bound}`);
  assert.ok(s.ringBytes() >= capacity * 9 * 64, 'ringBytes counts the column arrays');
});

test('declarations and undeclared ids are bounded: past MAX_DECLARED new ids are ignored and counted', () => {
  const d = new Declarations();
  const many = (n, make) => Array.from({ length: n }, (_, i) => make(i));
  d.apply({
    columns: many(MAX_DECLARED.columns + 10, (id) => ({ id, name: `c${id}` })),
    sites: many(MAX_DECLARED.sites + 10, (id) => ({ id, name: `s${id}` })),
    threads: many(MAX_DECLARED.threads + 10, (id) => ({ id, name: `t${id}` })),
  });
  assert.equal(d.columns.size, MAX_DECLARED.columns);
  assert.equal(d.sites.size, MAX_DECLARED.sites);
  assert.equal(d.threads.size, MAX_DECLARED.threads);
  assert.equal(d.ignored, 30);
  assert.equal(d.ensureColumn(MAX_DECLARED.columns + 100), null, 'an undeclared id past the cap gets no placeholder');
  assert.equal(d.ignored, 31);
  assert.equal(d.siteName(MAX_DECLARED.sites + 5), `site ${MAX_DECLARED.sites + 5}`);
  d.apply({ sites: [{ id: 3, name: 'renamed' }] }); // a known id is still updated at the cap
  assert.equal(d.siteName(3), 'renamed');
  // frames full of new column ids do not grow the store's declarations past the cap
  const s = new FrameStore({ capacity: 4 });
  for (let f = 0; f < 20; f++) {
    const values = many(1000, (i) => [f * 1000 + i, 1]);
    s.push(parseFrameView(encodeFrameView({ frameIndex: f, values })));
  }
  assert.equal(s.decls.columns.size, MAX_DECLARED.columns);
});

test('a column pushed out of the plotted set (a system column declared late) gives its arrays back', () => {
  const s = new FrameStore({ capacity: 10, maxColumns: 2 });
  s.decls.apply({ columns: [{ id: 5, name: 'a' }, { id: 6, name: 'b' }] });
  s.push(parseFrameView(encodeFrameView({ frameIndex: 0, values: [[5, 1], [6, 2]] })));
  assert.deepEqual([...s.columnData.keys()].sort(), [5, 6]);
  s.decls.apply({ columns: [{ id: 1, name: 'memory_mb', system: true }] });
  s.push(parseFrameView(encodeFrameView({ frameIndex: 1, values: [[1, 3], [5, 1], [6, 2]] })));
  assert.deepEqual(s.plotColumns().map((c) => c.name), ['memory_mb', 'a']);
  assert.deepEqual([...s.columnData.keys()].sort(), [1, 5]);
  assert.equal(s.hiddenColumns(), 1);
  s.clear();
  assert.deepEqual(s.plotColumns(), [], 'clear() forgets the plotted set too');
  assert.throws(() => new FrameStore({ maxColumns: MAX_PLOT_COLUMNS + 1 }), RangeError);
});

test('the clock declaration: kept with its step, source and isolation; malformed ones ignored', () => {
  const d = new Declarations();
  assert.equal(d.clock, null);
  d.apply({ clock: { resolution_ns: 100000, source: 'performance.now', cross_origin_isolated: false } });
  assert.deepEqual(d.clock, { resolutionNs: 100000, source: 'performance.now', crossOriginIsolated: false });
  d.apply('{"clock":{"resolution_ns":5000,"source":"performance.now","cross_origin_isolated":null}}');
  assert.deepEqual(d.clock, { resolutionNs: 5000, source: 'performance.now', crossOriginIsolated: null });
  for (const bad of [{ resolution_ns: 0 }, { resolution_ns: -5 }, { resolution_ns: 'x' }, { resolution_ns: Infinity }, 7, null]) d.apply({ clock: bad });
  assert.equal(d.clock.resolutionNs, 5000);
  d.clear();
  assert.equal(d.clock, null);
});
