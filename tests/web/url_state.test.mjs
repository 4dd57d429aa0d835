// URL state (web/url_state.js): range, pin, search and table read from and written to the query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readUrlView, writeUrlView } from '../../web/url_state.js';

test('reads range, pin, search and table; ignores malformed values', () => {
  assert.deepEqual(readUrlView(new URLSearchParams('capture=x&range=120-80&pin=100&search=phys%20step&table=1')),
    { range: [80, 120], pin: 100, search: 'phys step', table: true });
  assert.deepEqual(readUrlView(new URLSearchParams('range=1-x&pin=-4&table=yes')), { range: null, pin: null, search: '', table: false });
});

test('writes the view back, keeping other parameters and removing absent parts', () => {
  const p = new URLSearchParams('capture=x&pin=3&budget=8');
  writeUrlView(p, { range: [10, 20], pin: null, search: 'a&b', table: false });
  assert.equal(p.toString(), 'capture=x&budget=8&range=10-20&search=a%26b');
  assert.deepEqual(readUrlView(p), { range: [10, 20], pin: null, search: 'a&b', table: false });
});
