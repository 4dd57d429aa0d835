// captures_query.test.mjs - the captures page's query building (web/captures/query.js): what the
// form sends is what the store's query parser takes, and the page's URL reads back to the form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildQuery, diffCommand, parseQuery, stateOf } from '../../web/captures/query.js';

test('form values -> /api/captures query, and back from the page URL', () => {
  const v = { project: ' trainer ', tags: 'branch=main  gpu=a100', scope: 'matvec row', since: '2026-11-01',
    until: '2026-11-24', sort: 'scope', sortScope: 'layer forward', order: 'asc', offset: 200 };
  const q = buildQuery(v, { limit: 50 });
  const p = new URLSearchParams(q);
  assert.equal(p.get('project'), 'trainer');
  assert.deepEqual(p.getAll('tag'), ['branch=main', 'gpu=a100']);
  assert.equal(p.get('until'), '2026-11-25', 'the last day is included');
  assert.equal(p.get('sort'), 'scope:layer forward');
  assert.equal(p.get('order'), 'asc');
  assert.equal(p.get('limit'), '50');
  const back = parseQuery(`?${q}`);
  assert.deepEqual({ ...back }, { project: 'trainer', tags: 'branch=main gpu=a100', scope: 'matvec row',
    since: '2026-11-01', until: '2026-11-24', sort: 'scope', sortScope: 'layer forward', order: 'asc', offset: 200 });
  assert.equal(buildQuery({ sort: 'date' }), 'limit=100', 'defaults are not sent');
  assert.equal(new URLSearchParams(buildQuery({ sort: 'scope' })).get('sort'), null, 'scope sort needs a name');
});

test('row states and the diff command', () => {
  assert.equal(stateOf({ upload: 'uploading' }), 'live');
  assert.equal(stateOf({ upload: 'open', ended: 'cut' }), 'open');
  assert.equal(stateOf({ upload: 'complete', ended: 'properly' }), 'properly');
  const cmd = diffCommand('http://h:8700', { id: 'a-1' }, { id: "b'2" });
  assert.match(cmd, /curl -fo a\.vor 'http:\/\/h:8700\/api\/captures\/a-1\/file'/);
  assert.match(cmd, /'\\''/, 'quotes in ids are escaped for the shell');
  assert.match(cmd, /vor diff a\.vor b\.vor --svg diff\.svg/);
});
