// Search (web/search.js): matching sites by name or function, counting and listing the matching
// spans of a flame model in time order, the frames that hold a match, the window that shows one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { siteMatcher, flameMatches, framesWithMatches, matchWindow } from '../../web/search.js';
import { buildFlameModel } from '../../web/flame_model.js';
import { parseFrameView } from '../../web/frame_view.js';
import { Declarations, FrameStore } from '../../web/store.js';
import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

const d = new Declarations();
d.apply({ sites: [{ id: 1, name: 'frame' }, { id: 2, name: 'Physics step' }, { id: 3, name: 'x', function: 'solve_physics' }] });
const bytes = (start, site) => encodeFrameView({
  startNs: start, durationNs: 100, frameIndex: start / 100,
  threads: [{ id: 0, scopes: treeToScopes([{ site: 1, start, dur: 100, children: [{ site, start: start + 10, dur: 20 }, { site: 3, start: start + 50, dur: 5 }] }]) }],
});

test('a query matches names and functions, case-insensitively; an empty one matches nothing', () => {
  const m = siteMatcher(d, ' PHYSICS ');
  assert.deepEqual([1, 2, 3, 4].map((id) => m(id)), [false, true, true, false]);
  assert.equal(siteMatcher(d, '  '), null);
});

test('matching spans: exact count, listed by start', () => {
  const model = buildFlameModel([0, 1].map((i) => ({ seq: i, view: parseFrameView(bytes(i * 100, 2)) })));
  const r = flameMatches(model, siteMatcher(d, 'physics'));
  assert.equal(r.count, 4);
  assert.deepEqual(r.list.map((x) => x.start), [10, 50, 110, 150]);
  assert.equal(flameMatches(model, null).count, 0);
  const w = matchWindow(r.list[0]);
  assert.ok(w[0] < 10 && w[1] > 30);
});

test('frames holding a match are marked', () => {
  const st = new FrameStore({ capacity: 8 });
  st.decls.apply({ sites: [{ id: 1, name: 'frame' }, { id: 2, name: 'Physics step' }, { id: 3, name: 'x' }] });
  st.pushBytes(bytes(0, 2));
  st.pushBytes(bytes(100, 1));
  st.pushBytes(encodeFrameView({ startNs: 200, durationNs: 100, frameIndex: 2 })); // metrics only
  assert.deepEqual([...framesWithMatches(st, 0, 3, siteMatcher(st.decls, 'physics'))], [1, 0, 0]);
});
