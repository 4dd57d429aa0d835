// instrumented_names.test.mjs: -finstrument-functions in the wasm build, under node. With
// --profiling-funcs and wasm/prejs/module_capture.js every instrumented function is named as in
// the source (static ones included) and nests as it ran; without a name section they are named
// by function index, one distinct name per function. VOR_SKIP keeps a function out.
// Usage: node instrumented_names.test.mjs NAMED_TRACE.json STRIPPED_TRACE.json
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

const [namedPath, strippedPath] = process.argv.slice(2);
const scopes = (path) => JSON.parse(fs.readFileSync(path, 'utf8')).filter((e) => e.ph === 'X' && e.cat.split(',')[0] === 'vor'); // scopes, not frames ("vor,src:FILE:LINE")
const counts = (events) => {
  const c = {};
  for (const e of events) c[e.name] = (c[e.name] ?? 0) + 1;
  return c;
};
// three frames of run_step: square_sum(10) -> static_leaf x10, fib(5) -> 15 calls
const EXPECTED = { run_step: 3, square_sum: 3, static_leaf: 30, fib: 45 };

test('with a name section, functions are named as in the source and nest as they ran', () => {
  const events = scopes(namedPath);
  assert.deepEqual(counts(events), EXPECTED);
  const inside = (child, parent) => parent.ts <= child.ts && child.ts + child.dur <= parent.ts + parent.dur;
  for (const leaf of events.filter((e) => e.name === 'static_leaf'))
    assert.ok(events.some((p) => p.name === 'square_sum' && inside(leaf, p)), 'static_leaf inside square_sum');
  for (const f of events.filter((e) => e.name === 'fib'))
    assert.ok(events.some((p) => p.name === 'run_step' && inside(f, p)), 'fib inside run_step');
});

test('without one, functions are named by function index, one name each', () => {
  const c = counts(scopes(strippedPath));
  const names = Object.keys(c);
  assert.equal(names.length, 4, `names: ${names}`);
  for (const name of names) assert.match(name, /^wasm-function\[\d+\]$/);
  assert.deepEqual(Object.values(c).sort((a, b) => a - b), Object.values(EXPECTED).sort((a, b) => a - b));
});
