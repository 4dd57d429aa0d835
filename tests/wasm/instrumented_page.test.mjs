// instrumented_page.test.mjs: -finstrument-functions in a page, in headless Chromium. The module
// is instantiated with instantiateStreaming there (not the synchronous path of the node builds),
// so this checks that wasm/prejs/module_capture.js keeps it and the functions get source names.
//
//   node instrumented_page.test.mjs WASM_BIN_DIR
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserUnavailableReason, serveDirectory, launchBrowser } from '../browser/harness.mjs';

const [binDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const missing = await browserUnavailableReason();
if (missing) {
  console.error(`# FAIL wasm_instrumented_page: ${missing} (run scripts/setup.sh)`);
  process.exit(1);
}
if (!fs.existsSync(path.join(binDir, 'instrumented_names_web.mjs'))) {
  console.error(`# FAIL wasm_instrumented_page: ${binDir}/instrumented_names_web.mjs is missing (build the wasm flavour)`);
  process.exit(1);
}

test('in a page, instrumented functions are named as in the source', async () => {
  const server = await serveDirectory(path.join(here, 'fixtures'), { mounts: { '/bin/': binDir } });
  const browser = await launchBrowser();
  try {
    const page = browser.page;
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(new URL('instrumented.html', server.url).href);
    await page.waitForFunction(() => window.done === true, null, { timeout: 30000 });
    const { lines, failed } = await page.evaluate(() => ({ lines: window.lines, failed: window.failed }));
    assert.equal(failed, undefined);
    assert.deepEqual(errors, []);
    const sites = lines.filter((l) => l.startsWith('site ')).map((l) => l.slice(5)).sort();
    assert.deepEqual(sites, ['fib', 'run_step', 'square_sum', 'static_leaf']);
  } finally {
    await browser.close();
    await server.close();
  }
});
