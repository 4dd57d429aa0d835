// viewer_browser_test.mjs: the flame graph SVG's script, run in headless Chromium from disk.
//
// Run by ctest as test_flamegraph_viewer:  node viewer_browser_test.mjs PATH/TO/test_flamegraph_render
// Renders a small known graph, opens the .svg file (file://, no server: as a user would), then
// hovers, clicks a frame and searches, checking the geometry and texts the script must produce.
// `make test` installs playwright-core and Chromium (scripts/setup.sh); if either is missing the
// test fails with a message saying so, rather than passing without having run.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";

const CHROMIUM = "/usr/bin/chromium";

let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch {
  console.error("FAIL: playwright-core is not installed (run scripts/setup.sh: npm ci at the repository root)");
  process.exit(1);
}
if (!existsSync(CHROMIUM)) {
  console.error(`FAIL: ${CHROMIUM} not found (run scripts/setup.sh)`);
  process.exit(1);
}

const tool = process.argv[2];
const work = mkdtempSync(join(tmpdir(), "vor-flamegraph-viewer-"));
// Total 100: main 80 (parse 45 with lex 35, eval 35 with add 20 and mul 15), other 20.
const folded = [
  "main;parse;lex 30",
  "main;parse 10",
  "main;eval;add 20",
  "main;eval;mul 15",
  "main;parse;lex 5",
  "other 20",
].join("\n");
writeFileSync(join(work, "graph.folded"), folded + "\n");
const svgPath = join(work, "graph.svg");
execFileSync(tool, ["--deterministic", join(work, "graph.folded"), "-o", svgPath]);

const context = await chromium.launchPersistentContext(join(work, "profile"), {
  executablePath: CHROMIUM,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failed = false;
try {
  const page = context.pages()[0] ?? await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  await page.goto("file://" + svgPath);
  await page.waitForLoadState("load");

  // One record per frame, read from the live document.
  const frame = (name) => page.evaluate((wanted) => {
    for (const g of document.getElementById("frames").children) {
      const title = g.querySelector("title").textContent;
      if (title.slice(0, title.lastIndexOf(" (")) !== wanted) continue;
      const rect = g.querySelector("rect");
      const text = g.querySelector("text");
      return {
        x: Number(rect.getAttribute("x")), width: Number(rect.getAttribute("width")),
        fill: rect.getAttribute("fill"), label: text ? text.textContent : null,
        hidden: g.classList.contains("hide"), parent: g.classList.contains("parent"),
      };
    }
    return null;
  }, name);
  const textOf = (id) => page.evaluate((i) => document.getElementById(i).textContent, id);
  const classOf = (id) => page.evaluate((i) => document.getElementById(i).getAttribute("class"), id);
  const centreOf = (name) => page.evaluate((wanted) => {
    for (const g of document.getElementById("frames").children) {
      const title = g.querySelector("title").textContent;
      if (title.startsWith(wanted + " (")) {
        const box = g.querySelector("rect").getBoundingClientRect();
        return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      }
    }
    return null;
  }, name);
  const near = (actual, expected, what) =>
    assert.ok(Math.abs(actual - expected) < 0.02, `${what}: ${actual}, expected ${expected}`);

  // Hover shows the details of the frame under the pointer.
  let point = await centreOf("parse");
  await page.mouse.move(point.x, point.y);
  assert.equal(await textOf("details"), "parse (45 samples, 45.00%)");

  // Click zooms: parse fills the width, lex scales with it, main stays as a faded ancestor,
  // unrelated frames are hidden, Reset Zoom appears.
  near((await frame("parse")).width, 531, "parse before zoom");
  await page.mouse.click(point.x, point.y);
  near((await frame("parse")).x, 10, "zoomed parse x");
  near((await frame("parse")).width, 1180, "zoomed parse width");
  near((await frame("lex")).width, 1180 * 35 / 45, "lex inside the zoom");
  assert.equal((await frame("lex")).label, "lex");
  const main = await frame("main");
  assert.ok(main.parent && !main.hidden, "main stays visible as an ancestor");
  near(main.width, 1180, "ancestor width");
  assert.ok((await frame("eval")).hidden, "eval is hidden");
  assert.ok((await frame("other")).hidden, "other is hidden");
  assert.ok(!(await classOf("unzoom")).includes("hide"), "Reset Zoom is shown");

  // Reset Zoom restores the whole graph.
  await page.click("#unzoom");
  near((await frame("parse")).width, 531, "parse after reset");
  assert.ok(!(await frame("eval")).hidden, "eval is back");
  assert.ok((await classOf("unzoom")).includes("hide"), "Reset Zoom is hidden again");

  // Search with a regular expression: lex (35) and add (20) are highlighted; 55% matched.
  page.once("dialog", (dialog) => dialog.accept("^(lex|add)$"));
  await page.click("#search");
  assert.equal(await textOf("matched"), "Matched: 55.0%");
  assert.equal((await frame("lex")).fill, "rgb(230,0,230)");
  assert.notEqual((await frame("mul")).fill, "rgb(230,0,230)");
  assert.equal(await textOf("search"), "Reset Search");

  // Clicking "Reset Search" clears; Ctrl+F searches again. A match inside another match counts
  // once: parse (45) contains lex.
  await page.click("#search");
  assert.equal(await textOf("search"), "Search");
  assert.notEqual((await frame("lex")).fill, "rgb(230,0,230)");
  page.once("dialog", (dialog) => dialog.accept("parse|lex"));
  await page.keyboard.press("Control+f");
  assert.equal(await textOf("matched"), "Matched: 45.0%");

  // Text that is not a valid regular expression is searched as plain text.
  await page.keyboard.press("Escape");
  page.once("dialog", (dialog) => dialog.accept("ma("));
  await page.click("#search");
  assert.equal(await textOf("matched"), "Matched: 0.0%");

  assert.deepEqual(pageErrors, [], "no script errors");
  console.log("viewer: hover, zoom, reset, regex and text search all behave");
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await context.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
