// Scope table (web/scope_table.js): the reading rules of docs/FORMAT.md (contributions clipped to
// the frame, self never negative, recursion counted once, open scopes to the frame's end, calls and
// max from ended scopes, compensation by declared costs), sorting, sandwich and the diff of two tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildScopeTable, sortScopeRows, sandwich, diffScopeTables, diffColor, ROOT_CALLER } from '../../web/scope_table.js';
import { parseFrameView } from '../../web/frame_view.js';
import { Declarations } from '../../web/store.js';
import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

function decls(extra = {}) {
  const d = new Declarations();
  d.apply({
    sites: [
      { id: 1, name: 'frame' }, { id: 2, name: 'update' }, { id: 3, name: 'render' },
      { id: 4, name: 'leaf', module: 1 }, { id: 5, name: 'update' /* same name, another site */ },
    ],
    ...extra,
  });
  return d;
}

// frame [0, 100): frame(0..100) { update(10..40) { leaf(12..17), leaf(20..25) }, render(50..90) }
const tree = [{
  site: 1, start: 0, dur: 100, children: [
    { site: 2, start: 10, dur: 30, children: [{ site: 4, start: 12, dur: 5 }, { site: 4, start: 20, dur: 5 }] },
    { site: 3, start: 50, dur: 40 },
  ],
}];
const frame = (trees, start = 0, dur = 100, open = []) => ({
  seq: 0, view: parseFrameView(encodeFrameView({ startNs: start, durationNs: dur, threads: [{ id: 0, scopes: treeToScopes(trees), open }] })),
});

test('calls, total, self, mean, max and % per name', () => {
  const t = buildScopeTable([frame(tree)], decls());
  const r = (n) => t.byName.get(n);
  assert.equal(t.frames, 1);
  assert.equal(t.timeNs, 100);
  assert.deepEqual({ ...r('frame') }, { name: 'frame', calls: 1, total: 100, self: 30, mean: 100, max: 100, pct: 100, frames: 1 });
  assert.equal(r('update').self, 20);
  assert.equal(r('leaf').calls, 2);
  assert.equal(r('leaf').total, 10);
  assert.equal(r('leaf').mean, 5);
  assert.equal(r('render').pct, 40);
  assert.equal(t.compensated, false);
});

test('contributions are clipped to the frame; open scopes run to its end and are not calls', () => {
  // a scope begun before the frame (start -50, ended at 30) and one still open at the end (from 60)
  const f = {
    seq: 0, view: parseFrameView(encodeFrameView({
      startNs: 0, durationNs: 100,
      threads: [{ id: 0, scopes: [{ start: -50, dur: 80, site: 2, depth: 0 }], open: [{ start: 60, dur: 40, site: 3 }] }],
    })),
  };
  const t = buildScopeTable([f], decls());
  assert.equal(t.byName.get('update').total, 30);
  assert.equal(t.byName.get('update').max, 80); // full duration of an ended call
  assert.equal(t.byName.get('render').total, 40);
  assert.equal(t.byName.get('render').calls, 0);
});

test('recursion counts a name\'s total once; names merge across sites', () => {
  const rec = [{ site: 2, start: 0, dur: 100, children: [{ site: 5, start: 10, dur: 50, children: [{ site: 3, start: 20, dur: 10 }] }] }];
  const t = buildScopeTable([frame(rec)], decls());
  const u = t.byName.get('update');
  assert.equal(u.total, 100); // not 150
  assert.equal(u.self, 50 + 40);
  assert.equal(u.calls, 2);
});

test('compensation: each direct child costs its parent its calibrated cost (function sites: function cost)', () => {
  const d = decls({ costs: { scope_ns: 2, function_ns: 3 } });
  const t = buildScopeTable([frame(tree)], d);
  assert.equal(t.compensated, true);
  assert.equal(t.byName.get('update').self, 20 - 2 * 3); // two function-site leaves
  assert.equal(t.byName.get('frame').self, 30 - 2 * 2);
  assert.equal(t.byName.get('frame').total, 100 - 4 - 6);
  assert.equal(t.byName.get('frame').max, 90); // the full duration less the compensation inside
  const raw = buildScopeTable([frame(tree)], d, { compensate: false });
  assert.equal(raw.byName.get('update').self, 20);
  assert.equal(raw.costsKnown, true);
  // never negative
  const tiny = buildScopeTable([frame(tree)], decls({ costs: { scope_ns: 1000, function_ns: 1000 } }));
  assert.equal(tiny.byName.get('frame').self, 0);
});

test('sorting by any column, ties by name', () => {
  const t = buildScopeTable([frame(tree)], decls());
  assert.deepEqual(sortScopeRows(t.rows, 'total').map((r) => r.name), ['frame', 'render', 'update', 'leaf']);
  assert.deepEqual(sortScopeRows(t.rows, 'self').map((r) => r.name), ['render', 'frame', 'update', 'leaf']);
  assert.deepEqual(sortScopeRows(t.rows, 'calls', false).map((r) => r.name), ['frame', 'render', 'update', 'leaf']);
  assert.deepEqual(sortScopeRows(t.rows, 'name').map((r) => r.name), ['frame', 'leaf', 'render', 'update']);
});

test('sandwich: callers and callees of one name', () => {
  const t = buildScopeTable([frame(tree)], decls());
  const s = sandwich(t, 'update');
  assert.deepEqual(s.callers, [{ name: 'frame', ns: 30 }]);
  assert.deepEqual(s.callees, [{ name: 'leaf', ns: 10 }]);
  assert.deepEqual(sandwich(t, 'frame').callers, [{ name: ROOT_CALLER, ns: 100 }]);
  assert.deepEqual(sandwich(t, 'frame').callees, [{ name: 'render', ns: 40 }, { name: 'update', ns: 30 }]);
  assert.equal(sandwich(t, 'nothing').row, null);
});

test('diff of two tables: time per flame frame, sorted by the largest change, coloured as vor diff', () => {
  const a = buildScopeTable([frame(tree)], decls());
  const slower = [{ site: 1, start: 0, dur: 100, children: [{ site: 2, start: 0, dur: 90 }] }];
  const b = buildScopeTable([frame(slower), { ...frame(slower), seq: 1 }], decls());
  const d = diffScopeTables(a, b);
  assert.equal(d[0].name, 'update');
  assert.equal(d[0].a, 30);
  assert.equal(d[0].b, 90);
  assert.equal(d[0].ratio, 3);
  const render = d.find((r) => r.name === 'render');
  assert.equal(render.b, 0);
  assert.equal(render.delta, -40);
  assert.match(diffColor(30, 90), /^rgb\(2\d\d, \d{2,3}, \d{2,3}\)$/);
  const [r, , bl] = diffColor(30, 90).match(/\d+/g).map(Number);
  assert.ok(r > bl, 'slower is red');
  const [r2, , b2] = diffColor(90, 30).match(/\d+/g).map(Number);
  assert.ok(b2 > r2, 'faster is blue');
});

test('a second thread\'s parents (indexes in the whole view) are its own scopes', () => {
  const f = {
    seq: 0, view: parseFrameView(encodeFrameView({
      startNs: 0, durationNs: 100,
      threads: [{ id: 0, scopes: treeToScopes([{ site: 3, start: 0, dur: 10 }]) }, { id: 1, scopes: treeToScopes(tree) }],
    })),
  };
  const t = buildScopeTable([f], decls());
  assert.equal(t.byName.get('frame').self, 30);
  assert.equal(t.byName.get('update').self, 20);
  assert.deepEqual(sandwich(t, 'leaf').callers, [{ name: 'update', ns: 10 }]);
});
