// example_page.test.mjs: the wasm example page (wasm/site/example.html, assembled in the site
// directory) keeps its panel fed when JavaScript in the path throws: the page's poll loop asks for
// its next animation frame before it polls, so a poll that throws does not end it; and a panel
// source that throws is caught by the panel bridge's JS library (wasm/js/panel_bridge.js), never
// reaching C or the page, and reported once through vor's logger (the page prints it as a warning).
//
//   node example_page.test.mjs SITE_DIR
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { browserUnavailableReason, serveDirectory, launchBrowser } from '../browser/harness.mjs';

const [siteDir] = process.argv.slice(2);
const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL wasm_example_page: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
for (const f of ['example.html', 'training_loop.mjs', 'embed.js']) {
  if (!fs.existsSync(path.join(siteDir, f))) {
    console.error(`# FAIL wasm_example_page: ${path.join(siteDir, f)} is missing (build both flavours)`);
    process.exit(1);
  }
}

let server, browser;
before(async () => {
  server = await serveDirectory(siteDir);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function waitFor(page, predicate, what, timeoutMs = 20000) {
  const t0 = Date.now();
  for (;;) {
    const v = await page.evaluate(predicate).catch(() => null);
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function openExample() {
  const page = await browser.context.newPage();
  const pageErrors = [];
  const warnings = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => { if (msg.type() === 'warning') warnings.push(msg.text()); });
  await page.goto(new URL('example.html', server.url).href);
  await waitFor(page, () => window.vorExample && window.vorPanel && window.vorPanel.viewState().frames >= 5, '5 frames in the panel');
  return { page, pageErrors, warnings };
}

const framesShown = (page) => page.evaluate(() => window.vorPanel.viewState().frames);

// The clock chip of the embedded panel shows the step vor measured when the session started: 5 µs
// on this cross-origin isolated page, 100 µs (amber) on the same page served without COOP/COEP.
test('the embedded panel\'s clock chip shows the step vor measured on an isolated page and on another', async () => {
  const plain = await serveDirectory(siteDir, { isolation: false });
  try {
    for (const [base, text, coarse] of [[server.url, 'clock 5 µs', 'false'], [plain.url, 'clock 100 µs', 'true']]) {
      const page = await browser.context.newPage();
      await page.goto(new URL('example.html', base).href);
      await waitFor(page, () => window.vorPanel && !document.querySelector('.vor-clock').hidden, 'the clock chip');
      const chip = await page.evaluate(() => { const c = document.querySelector('.vor-clock'); return [c.textContent, c.dataset.coarse]; });
      await page.close();
      assert.deepEqual(chip, [text, coarse], base);
    }
  } finally {
    await plain.close();
  }
});

test('a poll that throws does not end the example\'s poll loop', async () => {
  const { page, pageErrors } = await openExample();
  try {
    await page.evaluate(() => {
      const m = window.vorExample;
      const poll = m._vor_wasm_panel_poll;
      window.pollCalls = 0;
      m._vor_wasm_panel_poll = () => {
        window.pollCalls++;
        if (window.pollCalls === 1) throw new Error('poll failed once');
        return poll();
      };
    });
    const shown = await framesShown(page);
    await waitFor(page, () => window.pollCalls >= 10, '10 more polls');
    await waitFor(page, () => window.vorPanel.viewState().frames > 0, 'frames');
    assert.ok(await framesShown(page) > shown, 'frames keep arriving after the failed poll');
    assert.deepEqual(pageErrors, ['poll failed once'], 'the one error reached the page, as the page\'s own');
  } finally {
    await page.close();
  }
});

test('a panel source that throws is caught, reported once, and the frames go on', async () => {
  const { page, pageErrors, warnings } = await openExample();
  try {
    await page.evaluate(() => {
      const m = window.vorExample;
      const real = m.vorPanelSource;
      window.sourceThrows = 0;
      m.vorPanelSource = {
        pushDeclarations: (json) => real.pushDeclarations(json),
        pushFrame: (u8) => {
          if (window.sourceThrows < 20) { window.sourceThrows++; throw new Error('source refused a frame'); }
          return real.pushFrame(u8);
        },
      };
    });
    await waitFor(page, () => window.sourceThrows >= 20, '20 frames refused');
    const shown = await framesShown(page);
    await waitFor(page, () => window.vorPanel.viewState().frames > 0, 'frames');
    const t0 = Date.now();
    while (await framesShown(page) <= shown && Date.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 50));
    assert.ok(await framesShown(page) > shown, 'frames reach the panel again once the source takes them');
    assert.deepEqual(pageErrors, [], 'nothing thrown into the page');
    const reports = warnings.filter((w) => w.includes('panel source threw'));
    assert.equal(reports.length, 1, `reported once: ${JSON.stringify(warnings)}`);
    assert.match(reports[0], /source refused a frame/);
  } finally {
    await page.close();
  }
});
