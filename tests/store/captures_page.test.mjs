// captures_page.test.mjs - the captures page (web/captures.html, web/captures/*.js) in headless
// Chromium against the real store (vor serve --store over its site directory) holding three real
// captures: filters by project, tag, process, date range and scope name, sorting, the search kept
// in the page's URL, two captures picked and compared (GET /api/compare: the store runs vor diff;
// the table is vor diff's, the commands shown fetch exactly the stored bytes; a capture it cannot
// compare says why), and a capture opened in the panel.
//
//   node captures_page.test.mjs SERVER_HOST VOR TRAINING_LOOP SITE_DIR
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { browserUnavailableReason, launchBrowser } from '../browser/harness.mjs';
import { SLOW, makeTmp, sleep, startServer } from '../server/server_harness.mjs';
import { randomKey, recordCapture, search, upload, waitIndexed } from './store_harness.mjs';

const [, vorBin, , siteDir] = process.argv.slice(2);
const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL captures_page: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}

const root = makeTmp('captures-page');
let browser, srv;
const ids = {};
const caps = {};

before(async () => {
  caps.a = recordCapture(root, 'a.vor', 80);
  caps.b = recordCapture(root, 'b.vor', 40);
  caps.c = recordCapture(root, 'c.vor', 20);
  srv = await startServer(['--store', fs.mkdtempSync(path.join(root, 'st-')), '--site', siteDir]);
  const sent = [['a', 'trainer', { branch: 'main' }], ['b', 'trainer', { branch: 'dev' }], ['c', 'other', { branch: 'main' }]];
  for (const [k, project, tags] of sent) {
    const r = await upload(srv.ws, caps[k], { key: randomKey(), project, tags, name: `${k}.vor` }).done;
    assert.equal(r.messages.at(-1).state, 'complete', r.reason);
    ids[k] = r.messages.at(-1).id;
  }
  await waitIndexed(srv, '', 3);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (srv) await srv.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Waits until `probe` (run in the page) returns something truthy; throws naming `what`. */
async function waitPage(page, probe, what, arg) {
  const end = Date.now() + 20000 * SLOW;
  for (;;) {
    const v = await page.evaluate(probe, arg).catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const rows = (page) => page.$$eval('#results tbody tr', (trs) => trs.map((tr) => tr.dataset.id));

/** Sets the form (fields not named are emptied), submits, waits for the answer; returns the rows. */
async function searchFor(page, fields) {
  const names = ['project', 'tags', 'process', 'host', 'scope', 'since', 'until', 'sortScope'];
  for (const n of names) await page.fill(`#filters [name=${n}]`, fields[n] ?? '');
  await page.selectOption('#filters [name=sort]', fields.sort ?? 'date');
  await page.selectOption('#filters [name=order]', fields.order ?? 'desc');
  await page.evaluate(() => { document.getElementById('status').textContent = ''; });
  await page.click('#filters button[type=submit]');
  await waitPage(page, () => /match/.test(document.getElementById('status').textContent), 'the search\'s answer');
  return rows(page);
}

test('filters, sorting and the search kept in the URL', async () => {
  const page = browser.page;
  await page.goto(`${srv.http}/captures.html`);
  await waitPage(page, () => document.querySelectorAll('#results tbody tr').length === 3, 'the three captures');
  assert.match(await page.textContent('#status'), /^3 captures match/);

  assert.deepEqual((await searchFor(page, { project: 'trainer' })).sort(), [ids.a, ids.b].sort());
  assert.deepEqual(await searchFor(page, { tags: 'branch=main' }).then((r) => r.sort()), [ids.a, ids.c].sort());
  assert.deepEqual(await searchFor(page, { project: 'trainer', tags: 'branch=dev' }), [ids.b]);
  assert.equal((await searchFor(page, { process: 'training_loop' })).length, 3);
  assert.equal((await searchFor(page, { scope: 'matvec' })).length, 3, 'a scope name, by its first letters');
  assert.deepEqual(await searchFor(page, { scope: 'nosuchscope' }), []);
  assert.match(await page.textContent('#status'), /^0 captures match/);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal((await searchFor(page, { since: today, until: today })).length, 3, 'today, both ends included');
  assert.deepEqual(await searchFor(page, { until: '2000-01-01' }), []);

  assert.deepEqual(await searchFor(page, { sort: 'frames', order: 'asc' }), [ids.c, ids.b, ids.a]);
  assert.deepEqual(await searchFor(page, { sort: 'frames' }), [ids.a, ids.b, ids.c]);
  // By one scope's total (measured times: the order is the one the totals give).
  const byScope = (await search(srv, 'sort=scope:train%20step')).body.captures;
  const totals = byScope.map((c) => c.sort_scope.total_ns);
  assert.deepEqual(totals, [...totals].sort((x, y) => y - x));
  assert.deepEqual(await searchFor(page, { sort: 'scope', sortScope: 'train step', order: 'desc' }), byScope.map((c) => c.id),
    'sorted by the total of one scope');
  const cells = await page.$$eval(`#results tr[data-id="${ids.a}"] td`, (tds) => tds.map((td) => td.textContent));
  assert.equal(cells[5], '80', 'frames column');
  assert.equal(cells[8], 'properly', 'ended column');

  // The search is in the page's URL: a reload (or a shared link) shows the same.
  await searchFor(page, { project: 'trainer', sort: 'frames', order: 'asc' });
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('project'), 'trainer');
  assert.equal(url.searchParams.get('sort'), 'frames');
  await page.reload();
  await waitPage(page, () => /match/.test(document.getElementById('status').textContent), 'the search after reload');
  assert.equal(await page.inputValue('#filters [name=project]'), 'trainer');
  assert.deepEqual(await rows(page), [ids.b, ids.a]);
});

test('two picked captures are compared by vor diff, run by the store; the commands shown fetch the stored bytes', async () => {
  const page = browser.page;
  await page.goto(`${srv.http}/captures.html?sort=frames`);
  await waitPage(page, () => document.querySelectorAll('#results tbody tr').length === 3, 'the list');
  assert.equal(await page.isHidden('#compare'), true);
  for (const k of ['a', 'b']) await page.check(`#results tr[data-id="${ids[k]}"] input[type=checkbox]`);
  await waitPage(page, () => document.querySelectorAll('#compare table.diff tr').length > 1, 'the comparison table');
  // The table is vor diff's: the same rows, in its order, as vor diff on the captures as uploaded.
  const text = await page.textContent('#compare pre');
  const urls = [...text.matchAll(/'(http[^']+)'/g)].map((m) => m[1]);
  assert.deepEqual(urls, [`${srv.http}/api/captures/${ids.a}/file`, `${srv.http}/api/captures/${ids.b}/file`]);
  assert.match(text, /vor diff a\.vor b\.vor --svg diff\.svg/);
  for (const [i, k] of ['a', 'b'].entries()) {
    const res = await fetch(urls[i]);
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.ok(bytes.equals(caps[k]), `${k}: the stored bytes`);
    fs.writeFileSync(path.join(root, `fetched-${k}.vor`), bytes);
  }
  const local = JSON.parse(execFileSync(vorBin, ['diff', path.join(root, 'fetched-a.vor'), path.join(root, 'fetched-b.vor'),
    '--json', '--top', '100']).toString());
  const served = await (await fetch(`${srv.http}/api/compare?a=${ids.a}&b=${ids.b}`)).json();
  assert.deepEqual(served.scopes, local.scopes, 'GET /api/compare is vor diff --json');
  assert.equal(served.a.file, `${ids.a}.vor`, 'no server path in the answer');
  const shown = await page.$$eval('#compare table.diff tr', (trs) => trs.slice(1).map((tr) => tr.children[0].textContent));
  assert.deepEqual(shown, local.scopes.slice(0, 40).map((r) => r.name));
  assert.ok(shown.includes('train step'));
  // A third pick replaces the oldest one: never more than two, and the comparison follows.
  await page.check(`#results tr[data-id="${ids.c}"] input[type=checkbox]`);
  await waitPage(page, (c) => document.querySelector('#compare pre')?.textContent.includes(c) &&
    document.querySelectorAll('#compare table.diff tr').length > 1, 'the new pair compared', ids.c);
  assert.equal(await page.$$eval('#results input[type=checkbox]:checked', (xs) => xs.length), 2);
});

test('a capture vor diff cannot compare (no flame frames) says why on the page', async () => {
  const metrics = recordCapture(root, 'm.vor', 10, { VOR_RECORD_FLAME: '0' });
  const r = await upload(srv.ws, metrics, { key: randomKey(), project: 'metrics', name: 'm.vor' }).done;
  const id = r.messages.at(-1).id;
  await waitIndexed(srv, 'project=metrics', 1);
  const page = browser.page;
  await page.goto(`${srv.http}/captures.html?sort=frames&order=asc`);
  await waitPage(page, () => document.querySelectorAll('#results tbody tr').length === 4, 'the list');
  await page.check(`#results tr[data-id="${id}"] input[type=checkbox]`);
  await page.check(`#results tr[data-id="${ids.a}"] input[type=checkbox]`);
  await waitPage(page, () => document.querySelector('#compare .diff-body.error'), 'the refusal');
  assert.match(await page.textContent('#compare .diff-body'), /cannot compare: .*no flame frames/);
  const res = await fetch(`${srv.http}/api/compare?a=${id}&b=nosuchid`);
  assert.equal(res.status, 404);
  const missing = await fetch(`${srv.http}/api/compare?a=${id}`);
  assert.equal(missing.status, 400);
  assert.match((await missing.json()).error, /parameter b/);
});

test('a capture opens in the panel', async () => {
  const page = browser.page;
  await page.goto(`${srv.http}/captures.html?project=trainer&sort=frames`);
  await waitPage(page, () => document.querySelectorAll('#results tbody tr').length === 2, 'the list');
  await page.click(`#results tr[data-id="${ids.a}"] a`);
  await page.waitForURL(/index\.html\?capture=/);
  await waitPage(page, () => window.vorPanel && window.vorPanel.viewState().frames >= 80, 'the capture\'s 80 frames in the panel');
  assert.equal(new URL(page.url()).searchParams.get('capture'), ids.a);
});
