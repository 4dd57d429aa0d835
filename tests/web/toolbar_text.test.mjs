// The toolbar's words (web/toolbar_text.js): the overhead chip over the frames in view, the clock
// chip (step, amber from 100 µs, isolation advice), the history and rejection counts, and the key
// that decides whether the DOM is rewritten.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolbarText, clockChipContent, overheadChipContent } from '../../web/toolbar_text.js';
import { FrameStore } from '../../web/store.js';
import { makeStore } from './panel_fixture.mjs';

test('the overhead chip: mean cost over the frames in view that report it, and its share', () => {
  const store = makeStore([{ ms: 10, overheadNs: 10000 }, { ms: 10 }, { ms: 30, overheadNs: 30000 }]);
  const chip = overheadChipContent(store, 0, 3, false);
  assert.equal(chip.text, 'vor 20 µs/frame · 0.10%');
  assert.match(chip.title, /mean over the 2 frames in view that report it.*Click to show it/);
  assert.match(overheadChipContent(store, 0, 3, true).title, /Click to hide/);
  assert.equal(overheadChipContent(store, 1, 2, false).text, 'vor overhead: not reported');
});

test('the clock chip: hidden without a clock, the step, amber from 100 µs, isolation advice', () => {
  assert.deepEqual(clockChipContent(null), { text: '', title: '', coarse: false });
  const fine = clockChipContent({ resolutionNs: 5000, source: 'performance.now', crossOriginIsolated: true });
  assert.deepEqual([fine.text, fine.coarse], ['clock 5 µs', false]);
  assert.match(fine.title, /timed with performance\.now in 5 µs steps.*was cross-origin isolated/);
  const coarse = clockChipContent({ resolutionNs: 100000, source: '', crossOriginIsolated: false });
  assert.deepEqual([coarse.text, coarse.coarse], ['clock 100 µs', true]);
  assert.match(coarse.title, /a clock in 100 µs steps.*Cross-Origin-Opener-Policy: same-origin.*Cross-Origin-Embedder-Policy: require-corp/);
  const ns = clockChipContent({ resolutionNs: 40, source: 'clock_gettime', crossOriginIsolated: null });
  assert.equal(ns.text, 'clock 40 ns');
  assert.doesNotMatch(ns.title, /isolated/);
});

test('counts, rejections, unplotted columns, and a key that follows the text', () => {
  const store = makeStore([{ scopes: true }, {}]);
  const t = toolbarText({ store, a: 0, b: 2, paused: false, showOverhead: false, rejected: 0, lastReject: '' });
  assert.deepEqual(t.pause, { text: '❚❚ Pause', paused: false });
  assert.equal(t.stats.text, '2 frames · 2 scopes');
  assert.equal(t.stats.title, 'The view holds 2 frames (at most 10,000) of the 2 frames seen; the strip above shows them all');
  assert.equal(t.clock.text, '');
  const p = toolbarText({ store, a: 0, b: 2, paused: true, showOverhead: true, rejected: 3, lastReject: 'bad magic' });
  assert.deepEqual(p.pause, { text: '▶ Resume', paused: true });
  assert.equal(p.chip.pressed, true);
  assert.equal(p.stats.text, '2 frames · 2 scopes · 3 rejected');
  assert.equal(p.stats.title, 'Last rejected frame view: bad magic');
  assert.notEqual(p.key, t.key);
  assert.equal(toolbarText({ store, a: 0, b: 2, paused: false, showOverhead: false, rejected: 0, lastReject: '' }).key, t.key);

  const wide = new FrameStore({ maxColumns: 2 });
  wide.decls.apply({ columns: [{ id: 0, name: 'frame_ms', system: true }, ...[1, 2, 3, 4, 5].map((id) => ({ id, name: `m${id}` }))] });
  const w = toolbarText({ store: wide, a: 0, b: 0, paused: false, showOverhead: false, rejected: 0, lastReject: '' });
  assert.equal(w.stats.text, '0 frames · 0 scopes · 3 more metrics not plotted');
  assert.match(w.stats.title, /the values of the other 3 are not kept\.$/);
});

test('a window of a larger capture says which frames of how many; frames kept out while paused are counted', () => {
  const store = makeStore([{ scopes: true }, {}, {}]);
  const t = toolbarText({ store, a: 0, b: 3, paused: true, showOverhead: false, rejected: 0, lastReject: '', captureFrames: 50000, skipped: 1 });
  const i0 = store.frameIndexOf(store.first).toLocaleString('en-US'), i1 = store.frameIndexOf(store.end - 1).toLocaleString('en-US');
  assert.equal(t.stats.text, `frames #${i0}–#${i1} of 50,000 · 2 scopes · 1 frame arrived while paused`);
  assert.match(t.stats.title, /holds 3 frames \(at most 10,000\) of the 50,000 frames seen.*the 1 frame that arrived were not kept/);
});
