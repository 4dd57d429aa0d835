// analysis.test.mjs: the panel's analysis in headless Chromium, against the real `vor serve` and
// captures written by vor's writer (vor_make_capture; one frame in 4 carries scopes):
//   - the scope table of the whole capture agrees with `vor summary --json` (calls, total, self,
//     mean, max per name; compensated by the header's calibrated scope cost, as the CLI is);
//   - sorting by a column, a row's callers and callees (sandwich);
//   - search: the match count, highlighted spans, next moves the flame window to a match, the bars
//     mark the frames holding one;
//   - a click on a metrics-only bar pins the nearest flame frame; the bars mark flame frames;
//   - comparing two frames (a baseline), then two captures (the baseline kept across the picker);
//   - the URL carries range, pin, search and table, and a reload shows the same view.
// Screenshots: build/screenshots/analysis-*.png.
//
//   node analysis.test.mjs VOR MAKE_CAPTURE SITE_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failWithoutBrowser, launchBrowser, collectPageErrors, nextFrames, screenshot, startVorServe, waitForPage } from './harness.mjs';

const [vorBin, makeCapture, siteDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = process.env.VOR_SCREENSHOT_DIR || path.resolve(here, '../../build/screenshots');
await failWithoutBrowser('browser_analysis');
fs.mkdirSync(shotDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-analysis-'));
const N = 400;
const capA = path.join(tmp, 'a.vor'), capB = path.join(tmp, 'b.vor');
execFileSync(makeCapture, [capA, '--frames', String(N), '--every', '4', '--seed', '1']);
execFileSync(makeCapture, [capB, '--frames', String(N), '--every', '4', '--seed', '7', '--scopes', '60']);
const children = [];
let browser;

before(async () => { browser = await launchBrowser({ viewport: { width: 1280, height: 900 } }); });
after(async () => {
  await browser?.close();
  for (const c of children) c.kill('SIGINT');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const serve = (files) => startVorServe(vorBin, files, siteDir, children);
const waitFor = waitForPage;
const view = (page) => page.evaluate(() => window.vorPanel.viewState());
const complete = (page) => waitFor(page, () => /complete · 400 frames$/.test(document.querySelector('.vor-status').textContent), '"complete"');

test('the scope table of a whole capture agrees with vor summary (compensated), sorts, and shows callers and callees', async () => {
  const summary = JSON.parse(execFileSync(vorBin, ['summary', capA, '--json', '--top', '100']).toString());
  assert.ok(summary.compensation.on && summary.compensation.scope_cost_ns > 0, 'the capture records a calibrated cost');
  const url = await serve([capA]);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(`${url}?table=1`);
    await complete(page);
    await page.evaluate((n) => window.vorPanel.showFrames(0, n - 1), N);
    await waitFor(page, () => window.vorPanel.viewState().range !== null, 'the whole range');
    const t = await page.evaluate(() => {
      const { table, label } = window.vorPanel.scopeTable();
      return { label, frames: table.frames, compensated: table.compensated, rows: table.rows };
    });
    assert.equal(t.frames, summary.flame_frames);
    assert.equal(t.compensated, true);
    const byName = new Map(t.rows.map((r) => [r.name, r]));
    assert.equal(byName.size, summary.top_by_total.length);
    for (const s of summary.top_by_total) {
      const r = byName.get(s.name);
      assert.ok(r, `${s.name} in the table`);
      assert.equal(r.calls, s.calls, `${s.name}: calls`);
      const tol = 1; // the same rules on the same integers: equal up to float summation
      assert.ok(Math.abs(r.total - s.total_ns) <= tol, `${s.name}: total ${r.total} vs ${s.total_ns}`);
      assert.ok(Math.abs(r.self - s.self_ns) <= tol, `${s.name}: self ${r.self} vs ${s.self_ns}`);
      assert.ok(Math.abs(r.mean - s.mean_ns) <= 2, `${s.name}: mean ${r.mean} vs ${s.mean_ns}`);
      assert.ok(Math.abs(r.max - s.max_ns) <= 2, `${s.name}: max ${r.max} vs ${s.max_ns}`);
    }
    // the pane: rows, sorted by total; a click on "self" sorts by self
    await nextFrames(page, 2);
    const firstRow = () => page.evaluate(() => document.querySelector('.vor-analysis tr[data-name]')?.dataset.name);
    assert.equal(await firstRow(), summary.top_by_total[0].name);
    await page.click('.vor-analysis th[data-sort="self"]');
    await waitFor(page, (name) => document.querySelector('.vor-analysis tr[data-name]')?.dataset.name === name, 'sorted by self', 5000, summary.top_by_self[0].name);
    // a row: its callers and callees
    await page.click('.vor-analysis tr[data-name="physics"]');
    await waitFor(page, () => !!document.querySelector('.vor-an-sandwich'), 'the sandwich');
    const sw = await page.evaluate(() => [...document.querySelectorAll('.vor-an-sandwich .vor-an-sub, .vor-an-sandwich .vor-an-edge')].map((e) => e.textContent));
    assert.ok(sw.some((x) => /^Callers of physics/.test(x)) && sw.some((x) => /^update/.test(x)), `physics is called by update: ${sw.join(' | ')}`);
    assert.ok(sw.some((x) => /^collide/.test(x)), `physics calls collide: ${sw.join(' | ')}`);
    await screenshot(page, path.join(shotDir, 'analysis-table.png'));
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
  }
});

test('search, flame-frame marks and snapping, compare two frames and two captures, URL state', async () => {
  const url = await serve([capA, capB]);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(url);
    await complete(page);
    // a click on a metrics-only bar pins the nearest flame frame
    const frameWithout = await page.evaluate(() => {
      const st = window.vorPanel.store;
      for (let q = st.end - 40; q < st.end; q++) if (st.scopesState(q) !== 1) return st.frameIndexOf(q);
      return -1;
    });
    assert.ok(frameWithout >= 0);
    const x = await page.evaluate((f) => window.vorPanel.xOfFrameIndex(f), frameWithout);
    const bars = (await page.evaluate(() => window.vorPanel.regions().bars.chart));
    const box = await page.locator('canvas.vor-canvas').boundingBox();
    await page.mouse.click(box.x + x, box.y + bars.y + bars.h - 4);
    await waitFor(page, () => window.vorPanel.viewState().pinnedFrameIndex !== null, 'a pin');
    const pinned = (await view(page)).pinnedFrameIndex;
    assert.ok(Math.abs(pinned - frameWithout) <= 2 && pinned !== frameWithout, `snapped from #${frameWithout} to #${pinned}`);
    assert.ok((await view(page)).flameScopes > 0, 'the pinned frame shows scopes');
    // the marks under the bars: flame frames in their colour (#5cc2c0)
    const marks = await page.evaluate(([bx, by, bw]) => {
      const c = document.querySelector('canvas.vor-canvas');
      const k = c.width / c.clientWidth;
      const d = c.getContext('2d').getImageData(Math.round(bx * k), Math.round((by + 0.5) * k), Math.round(bw * k), 1).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x5c) < 8 && Math.abs(d[i + 1] - 0xc2) < 8 && Math.abs(d[i + 2] - 0xc0) < 8) n++;
      return n;
    }, [bars.x, bars.y + bars.h, bars.w]);
    assert.ok(marks > 20, `flame frames marked under the bars (${marks} px)`);

    // search: count, next moves the flame window onto a match
    await page.keyboard.press('Control+f');
    assert.equal(await page.evaluate(() => document.activeElement.className), '', 'Ctrl+F focuses the search field');
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Search scopes by name');
    await page.keyboard.type('inflate');
    const s = await waitFor(page, () => window.vorPanel.searchState(), 'the search');
    const expected = await page.evaluate(() => {
      const st = window.vorPanel.store;
      const v = st.scopes(window.vorPanel.model.state.pinned);
      let n = 0;
      for (const site of v.scopeSite) if (st.decls.siteName(site) === 'inflate') n++;
      return n;
    });
    assert.equal(s.count, expected, 'the match count is the number of inflate spans in the frame');
    assert.ok(expected > 0);
    await page.keyboard.press('Enter');
    await waitFor(page, () => window.vorPanel.searchState()?.index === 0, 'the first match');
    await nextFrames(page, 2);
    const countText = await page.evaluate(() => document.querySelector('.vor-search-count').textContent);
    assert.match(countText, new RegExp(`^1 / ${expected} match`));
    const w = (await view(page)).flameWindowNs;
    const m0 = await page.evaluate(() => { const st = window.vorPanel; return st.searchState() && null; });
    assert.equal(m0, null);
    assert.ok(w[1] - w[0] < 2e6, `the flame window narrowed to the match (${w[1] - w[0]} ns)`);
    await screenshot(page, path.join(shotDir, 'analysis-search.png'));

    // compare two frames: this one as the baseline, then another flame frame
    await page.click('.vor-table-btn');
    await waitFor(page, () => !!document.querySelector('.vor-an-base'), 'the table');
    await page.click('.vor-an-base');
    await waitFor(page, () => /^vs /.test(document.querySelector('.vor-an-base').textContent), 'the baseline set');
    await page.evaluate((p) => window.vorPanel.pinFrameIndex(p - 8), pinned);
    await waitFor(page, () => [...document.querySelectorAll('.vor-analysis th')].some((th) => th.textContent === 'change'), 'the diff columns');
    // URL state: pin, search and table written
    await waitFor(page, () => /pin=\d+/.test(location.search) && /search=inflate/.test(location.search) && /table=1/.test(location.search), 'the URL');
    const link = await page.evaluate(() => location.href);
    await screenshot(page, path.join(shotDir, 'analysis-compare-frames.png'));

    // compare two captures: the baseline stays when the other capture is picked
    const idB = await page.evaluate(() => [...document.querySelectorAll('.vor-source select option')].find((o) => /b\.vor/.test(o.textContent)).value);
    await page.selectOption('.vor-source select', idB);
    await complete(page);
    await page.evaluate((n) => window.vorPanel.showFrames(0, n - 1), N);
    await waitFor(page, () => [...document.querySelectorAll('.vor-analysis th')].some((th) => th.textContent === 'change')
      && /a\.vor/.test(document.querySelector('.vor-an-base').textContent), 'capture b compared with a frame of capture a');
    const colored = await page.evaluate(() => [...document.querySelectorAll('.vor-analysis tr[data-name] td:last-child')].map((td) => td.style.background).filter((b) => b && b !== 'rgb(230, 230, 230)').length);
    assert.ok(colored > 3, `changes coloured (${colored})`);
    await screenshot(page, path.join(shotDir, 'analysis-compare-captures.png'));

    // the link restores the view: the pin, the search and the table
    const again = await browser.context.newPage();
    try {
      await again.goto(link);
      const pin = Number(new URL(link).searchParams.get('pin'));
      await waitFor(again, (p) => window.vorPanel?.viewState().pinnedFrameIndex === p, 'the pinned frame from the link', 30000, pin);
      const v = await view(again);
      assert.equal(v.search, 'inflate');
      assert.equal(v.tableOpen, true);
      await screenshot(again, path.join(shotDir, 'analysis-link.png'));
    } finally {
      await again.close();
    }
    assert.deepEqual(errors.filter((e) => !/favicon/.test(e)), []);
  } finally {
    await page.close();
  }
});
