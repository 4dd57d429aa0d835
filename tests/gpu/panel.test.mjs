// panel.test.mjs: the GPU rows in the panel, in headless Chromium. A capture of two fake GPUs
// (gpu_workload with the fake NVML, as test_gpu.py runs it) is opened on the page and decoded in
// the browser; the panel must declare every GPU column with its unit, hold the exact value of every
// frame, draw a plot for each (pixels in its region) and show the value with its unit on hover.
// Screenshot: build/screenshots/gpu-panel.png.
//
//   node panel.test.mjs GPU_WORKLOAD FAKES_DIR SITE_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  browserUnavailableReason, serveDirectory, launchBrowser, collectPageErrors, canvasRegionStats, nextFrames, screenshot,
  hexToRgb,
} from '../browser/harness.mjs';

const [workload, fakes, siteDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const shotDir = process.env.VOR_SCREENSHOT_DIR || path.resolve(here, '../../build/screenshots');
const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL gpu_panel: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
const { THEME } = await import(path.resolve(here, '../../web/colors.js'));
const { formatValue } = await import(path.resolve(here, '../../web/axis.js'));
const REGION = hexToRgb(THEME.region), REGION_ALT = hexToRgb(THEME.regionAlt);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-gpu-panel-'));
let browser;

// The fake's raw readings (as test_gpu.py scripts them) and vor's scales: value = raw * scale.
const raw = (d) => ({ util: 37 + d, mem: 1234567890 + d * 1000003, power: 123456 + d * 1111, pcie: 1000 + d + 2500 + 7 * d,
  temp: 61 + d, clock: 1410 + 15 * d });
const READINGS = [['util', '%', 1], ['mem', 'MB', 1e-6], ['power', 'W', 1e-3], ['pcie', 'MB/s', 1.024e-3], ['temp', 'C', 1],
  ['clock', 'MHz', 1]];
const GPU_COLUMNS = [0, 1].flatMap((d) => READINGS.map(([r, unit, scale]) => ({ name: `gpu${d}_${r}`, unit, value: raw(d)[r] * scale })));
const FRAMES = 40;

before(async () => { browser = await launchBrowser({ viewport: { width: 1280, height: 1800 } }); });
after(async () => {
  await browser?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function capture() {
  const script = path.join(tmp, 'script');
  const lines = ['devices 2'];
  for (const d of [0, 1]) {
    const r = raw(d);
    lines.push(`value ${d} util ${r.util}`, `value ${d} mem ${r.mem}`, `value ${d} power ${r.power}`,
      `value ${d} pcie_tx ${1000 + d}`, `value ${d} pcie_rx ${2500 + 7 * d}`, `value ${d} temp ${r.temp}`, `value ${d} clock ${r.clock}`);
  }
  fs.writeFileSync(script, lines.join('\n') + '\n');
  const file = path.join(tmp, 'gpu.vor');
  const p = spawnSync(workload, ['enable', 'frames', String(FRAMES), 'shutdown'], {
    env: { ...process.env, LD_LIBRARY_PATH: path.join(fakes, 'fake_nvml_full'), FAKE_NVML_SCRIPT: script, VOR_RECORD: file },
    encoding: 'utf8',
  });
  assert.equal(p.status, 0, `gpu_workload: ${p.stderr}`);
  return file;
}

test('the panel plots every GPU column with its unit and exact values', async () => {
  const file = capture();
  const server = await serveDirectory(siteDir);
  const page = await browser.context.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(server.url);
    await page.waitForFunction(() => window.vorPanel, null, { timeout: 20000 });
    await page.setInputFiles('input[type=file]', file);
    await page.waitForFunction((n) => window.vorPanel.viewState().frames >= n, FRAMES, { timeout: 20000 });
    await nextFrames(page, 3);

    // Declared as system columns, in vor's order, with their units.
    const plotted = await page.evaluate(() => window.vorPanel.store.plotColumns().map((c) => ({ id: c.id, name: c.name, unit: c.unit, system: c.system })));
    const gpu = plotted.filter((c) => c.name.startsWith('gpu'));
    assert.deepEqual(gpu.map((c) => [c.name, c.unit, c.system]), GPU_COLUMNS.map((c) => [c.name, c.unit, true]));

    // Every frame holds the exact value of every GPU column.
    const values = await page.evaluate((ids) => {
      const s = window.vorPanel.store;
      const out = [];
      for (let q = s.first; q < s.end; q++) out.push(ids.map((id) => s.columnValue(id, q)));
      return out;
    }, gpu.map((c) => c.id));
    assert.equal(values.length, FRAMES);
    for (const [f, row] of values.entries()) {
      row.forEach((v, k) => assert.equal(v, GPU_COLUMNS[k].value, `frame ${f}: ${GPU_COLUMNS[k].name}`));
    }

    // Each GPU plot is drawn, and hovering it shows the value with its unit.
    const regions = await page.evaluate(() => window.vorPanel.regions());
    const box = await page.locator('canvas.vor-canvas').boundingBox();
    for (const [k, c] of gpu.entries()) {
      const i = plotted.findIndex((p) => p.id === c.id);
      const r = regions.plots[i];
      assert.ok(r, `a plot region for ${c.name}`);
      const s = await canvasRegionStats(page, 'canvas.vor-canvas', r.chart, i % 2 ? REGION_ALT : REGION);
      assert.ok(s.differing > 50, `${c.name}: plot drawn (${s.differing} pixels)`);
      await page.mouse.move(box.x + r.chart.x + r.chart.w * 0.9, box.y + r.chart.y + r.chart.h / 2);
      await nextFrames(page, 2);
      const tip = await page.evaluate(() => window.vorPanel.viewState().tooltip);
      assert.ok(tip && tip.includes(c.name), `${c.name}: tooltip ${tip}`);
      assert.ok(tip.includes(formatValue(GPU_COLUMNS[k].value, c.unit)), `${c.name}: tooltip ${JSON.stringify(tip)} shows ${formatValue(GPU_COLUMNS[k].value, c.unit)}`);
    }
    await screenshot(page, path.join(shotDir, 'gpu-panel.png'));
    assert.deepEqual(errors.filter((e) => !/favicon|api\/captures|404/.test(e)), []);
  } finally {
    await page.close();
    await server.close();
  }
});
