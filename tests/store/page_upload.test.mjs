// page_upload.test.mjs - a wasm page streams its capture to the store (Module.vorUpload,
// wasm/js/upload.js + wasm/src/upload_wasm.c) in headless Chromium: the example page
// (build/site/example.html, the training loop compiled to wasm) served by the store's own server
// uploads live, the store indexes it as a wasm capture of its project and tags, the upload goes on
// through a server restart (resumed from the server's offset: no frame lost, none twice), ends as
// "cut" when the page goes away, and the stored capture reads back with `vor summary`, every frame
// since vorUpload(). A page may not upload to a store that does not allow its origin.
//
//   node page_upload.test.mjs SERVER_HOST VOR SITE_DIR
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { browserUnavailableReason, launchBrowser, serveDirectory } from '../browser/harness.mjs';
import { SLOW, makeTmp, sleep, startServer } from '../server/server_harness.mjs';
import { freePort, search } from './store_harness.mjs';

const [, vorBin, siteDir] = process.argv.slice(2);
const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL page_upload: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
if (!fs.existsSync(path.join(siteDir, 'training_loop.mjs'))) {
  console.error(`# FAIL page_upload: ${siteDir}/training_loop.mjs is missing (build the wasm flavour: sh scripts/build-wasm.sh)`);
  process.exit(1);
}

const root = makeTmp('page-upload');
let browser;
before(async () => { browser = await launchBrowser(); });
after(async () => {
  await browser?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Polls `probe` until it returns something truthy; throws naming `what` after 30 s (x SLOW). */
async function waitFor(probe, what) {
  const end = Date.now() + 30000 * SLOW;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Polls the store until `pred(capture)` holds for the first capture of `query`. */
async function waitCapture(srv, query, pred, what) {
  return waitFor(async () => {
    const { body } = await search(srv, query).catch(() => ({ body: {} }));
    const c = (body.captures || [])[0];
    return c && pred(c) ? c : null;
  }, what);
}

async function startExample(url) {
  const page = browser.page;
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => window.vorExample && typeof window.vorExample.vorUpload === 'function',
    null, { timeout: 30000 * SLOW });
  return { page, warnings };
}

test('a page uploads live; the upload resumes through a server restart; the capture reads back whole', async () => {
  const dir = fs.mkdtempSync(path.join(root, 'st-'));
  const port = await freePort();
  const args = ['--store', dir, '--site', siteDir, '--port', String(port)];
  let srv = await startServer(args);
  try {
    const { page } = await startExample(`${srv.http}/example.html`);
    const started = await page.evaluate(() => window.vorExample.vorUpload(location.origin,
      { project: 'web', tags: { browser: 'chromium', run: '1' }, name: 'page.vor', flame: true }));
    assert.equal(started, true);
    const live = await waitCapture(srv, 'project=web', (c) => c.upload === 'uploading' && c.frames > 30,
      'the page\'s capture stored while it runs');
    assert.equal(live.platform, 'wasm');
    assert.equal(live.name, 'page.vor');
    assert.deepEqual(live.tags, { browser: 'chromium', run: '1' });
    const before = live.frames;

    assert.equal((await srv.stop()).code, 0);
    await sleep(700); // the page runs on; its records wait in the page
    srv = await startServer(args);
    const resumed = await waitCapture(srv, 'project=web', (c) => c.upload === 'uploading' && c.frames > before + 30,
      'the upload resumed after the restart');
    assert.equal(resumed.id, live.id, 'the same capture, resumed (not a second one)');

    await page.goto('about:blank'); // the page goes away: it finishes the upload (pagehide)
    const cut = await waitCapture(srv, 'project=web', (c) => c.upload !== 'uploading' && c.indexed,
      'the upload ended with the page');
    assert.equal(cut.upload, 'cut', 'finished by the page as it went (not left open for a resume)');
    assert.equal(cut.ended, 'cut');
    const file = path.join(dir, 'captures', `${cut.id}.vor`);
    const summary = JSON.parse(execFileSync(vorBin, ['summary', '--json', file]).toString());
    // The upload holds the frames from the one after vorUpload() on: every one, none twice.
    assert.equal(summary.frames, summary.last_index - summary.first_index + 1, 'no frame lost across the restart');
    assert.ok(summary.flame_frames > 0 && summary.scopes > 0);
    assert.equal(summary.damaged_records.count, 0, 'no damaged record');
    assert.equal(cut.frames, summary.frames);
    assert.equal(cut.platform, 'wasm');
    assert.ok(cut.top_total.some((s) => s.name === 'train step'), JSON.stringify(cut.top_total));
  } finally {
    await srv.stop();
  }
});

test('a page of another origin is refused unless the store allows it (--upload-origin)', async () => {
  const dir = fs.mkdtempSync(path.join(root, 'st-'));
  const srv = await startServer(['--store', dir, '--site', siteDir]);
  const site = await serveDirectory(siteDir, { isolation: false });
  try {
    const { page, warnings } = await startExample(`${site.url}example.html`);
    assert.equal(await page.evaluate((u) => window.vorExample.vorUpload(u, { project: 'other' }), srv.http), true);
    await waitFor(() => warnings.some((w) => /was refused: upload refused: this store does not take uploads from pages of this origin/.test(w)),
      'the refusal reported on the console');
    assert.ok(!warnings.some((w) => /lost its connection/.test(w)), 'a refusal, not a connection to retry');
    await sleep(500);
    assert.equal((await search(srv, 'project=other')).body.captures.length, 0, 'nothing stored');
    await page.goto('about:blank');
  } finally {
    await site.close();
    await srv.stop();
  }
});
