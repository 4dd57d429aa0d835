// The wasm set-up as a user meets it: README's emcc lines, the installed package, vor as a
// CMake subproject.
//
//   1. README's plain emcc lines, read out of README.md (so the README cannot drift from what is
//      tested), run exactly as written (path/to/vor replaced by this tree) at -O0 and -O2, in an
//      environment without NODE_PATH, on tests/wasm/consumer/app.c; the programs they make run
//      (the ES module under node, the node program with README's own VOR_RECORD line).
//   2. `cmake --install` of the wasm build into a temporary prefix, then README's lines for the
//      installed package (pkg-config with emcc at -O0 and -O2; emcmake + find_package at Release):
//      the consumer builds and runs.
//   3. vor as a subproject of tests/wasm/consumer, natively (add_subdirectory) and for wasm
//      (FetchContent), from a copy of this tree: only vor's libraries are built (no program, test
//      or benchmark target), the program runs, and not one file of the copy is added or changed.
//
// Run: node tests/wasm/setup.test.mjs WASM_BUILD_DIR   (ctest: wasm_setup, from the native build)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const wasmBuild = path.resolve(process.argv[2] || path.join(repo, 'build/wasm'));
const consumer = path.join(here, 'consumer');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-setup-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

for (const f of ['lib/libvor.a', 'lib/libvor_lz4_wasm.a']) {
  if (!fs.existsSync(path.join(wasmBuild, f))) {
    console.error(`# FAIL wasm_setup: ${path.join(wasmBuild, f)} is missing (build the wasm flavour: sh scripts/build-wasm.sh)`);
    process.exit(1);
  }
}

// The environment of a user's shell: no NODE_PATH (README's lines must not need one set).
const env = { ...process.env };
delete env.NODE_PATH;

function sh(command, cwd, extraEnv = {}) {
  const r = spawnSync('sh', ['-c', command], { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) assert.fail(`failed (${r.status}): ${command}\n${(r.stdout || '').slice(-2000)}\n${(r.stderr || '').slice(-4000)}`);
  return r.stdout;
}

/** The shell commands of README's "WebAssembly and the browser" section (continuations joined). */
function readmeCommands() {
  const text = fs.readFileSync(path.join(repo, 'README.md'), 'utf8');
  const start = text.indexOf('\n## WebAssembly and the browser');
  assert.ok(start >= 0, 'README has its WebAssembly section');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const commands = [];
  for (const [, body] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    commands.push(...body.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
  }
  return commands;
}

const commands = readmeCommands();
const inTree = (c) => c.replaceAll('path/to/vor/build/wasm', wasmBuild).replaceAll('path/to/vor', repo);

function fresh(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(consumer, 'app.c'), path.join(dir, 'app.c'));
  return dir;
}

// The ES module is for pages; node runs it with what Emscripten 3.1.6's glue expects there
// (require, __dirname) and the wasm handed over (its glue would fetch a file: URL).
function runModule(dir) {
  return sh(`node --input-type=module -e "import { createRequire } from 'node:module'; import fs from 'node:fs'; ` +
    `globalThis.require = createRequire(import.meta.url + '/'); globalThis.__dirname = process.cwd(); ` +
    `const m = await import('./app.mjs'); await m.default({ wasmBinary: fs.readFileSync('app.wasm') });"`, dir);
}

test("README's plain emcc lines work as written, at -O0 and -O2", () => {
  const emcc = commands.filter((c) => /\bemcc app\.c\b/.test(c) && c.includes('path/to/vor'));
  assert.equal(emcc.length, 2, `two plain emcc lines in README:\n${commands.join('\n')}`);
  const run = commands.find((c) => /^VOR_RECORD=app\.vor node app\.cjs$/.test(c));
  assert.ok(run, 'README runs the node program');
  for (const level of ['-O0', '-O2']) {
    const dir = fresh(`plain${level}`);
    for (const c of emcc) sh(`${inTree(c)} ${level}`, dir);
    assert.match(runModule(dir), /^app: 3 frames, 6 scopes$/m, `${level}: the ES module runs`);
    assert.match(sh(run, dir), /^app: 3 frames, 6 scopes$/m, `${level}: the node program runs`);
    assert.ok(fs.statSync(path.join(dir, 'app.vor')).size > 0, `${level}: VOR_RECORD wrote a capture`);
  }
});

test("make install's wasm flavour: README's lines for the installed package build and run", () => {
  const prefix = path.join(tmp, 'prefix');
  execFileSync('cmake', ['--install', wasmBuild, '--prefix', prefix], { env, stdio: 'pipe' });
  for (const f of ['lib/wasm32-emscripten/libvor.a', 'lib/wasm32-emscripten/libvor_lz4_wasm.a',
    'lib/wasm32-emscripten/cmake/vor/vorConfig.cmake', 'lib/wasm32-emscripten/pkgconfig/vor.pc', 'include/vor/vor.h',
    'include/vor/browser.h', 'share/vor/wasm/js/devtools.js', 'share/vor/wasm/js/panel_bridge.js',
    'share/vor/wasm/js/function_names.js', 'share/vor/wasm/prejs/node_env.js', 'share/vor/wasm/prejs/module_capture.js']) {
    assert.ok(fs.existsSync(path.join(prefix, f)), `installed: ${f}`);
  }
  const installed = commands.filter((c) => c.includes('$PREFIX'));
  const pc = installed.filter((c) => /\bemcc app\.c\b/.test(c));
  assert.equal(pc.length, 1, 'README has the pkg-config line');
  for (const level of ['-O0', '-O2']) {
    const dir = fresh(`installed${level}`);
    sh(`${pc[0]} ${level}`, dir, { PREFIX: prefix });
    assert.match(runModule(dir), /^app: 3 frames, 6 scopes$/m, `${level}: pkg-config build runs`);
  }
  const cmake = commands.slice(commands.indexOf(installed.find((c) => c.startsWith('emcmake cmake'))));
  assert.ok(cmake[0]?.startsWith('emcmake cmake') && cmake[1]?.startsWith('cmake --build'), 'README has the emcmake lines');
  const dir = fresh('installed-cmake');
  fs.copyFileSync(path.join(consumer, 'CMakeLists.txt'), path.join(dir, 'CMakeLists.txt'));
  for (const c of cmake.slice(0, 2)) sh(c, dir, { PREFIX: prefix });
  assert.match(sh('node build-wasm/app.cjs', dir), /^app: 3 frames, 6 scopes$/m);
});

/** Every file under `dir` (relative path -> size and mtime). */
function snapshot(dir) {
  const out = new Map();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else { const st = fs.lstatSync(p); out.set(path.relative(dir, p), `${st.size} ${st.mtimeMs}`); }
    }
  };
  walk(dir);
  return out;
}

test('as a subproject vor builds only its libraries and writes nothing into its source tree', () => {
  const src = path.join(tmp, 'vor-src');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo })
    .toString().split('\0').filter((f) => f && fs.existsSync(path.join(repo, f)));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(src, f)), { recursive: true });
    fs.copyFileSync(path.join(repo, f), path.join(src, f));
  }
  const before = snapshot(src);
  const lz4 = execFileSync('sh', ['-c', `grep '^VOR_LZ4_SOURCE_DIR' CMakeCache.txt | cut -d= -f2-`], { cwd: wasmBuild }).toString().trim();
  assert.ok(fs.existsSync(path.join(lz4, 'lib/lz4.c')), `the wasm build's lz4 source (${lz4})`);
  const builds = [
    ['native', path.join(tmp, 'sub-native'), `cmake -S "${consumer}" -B "$B" -G Ninja -DVOR_SUBPROJECT="${src}"`, '"$B/app"'],
    ['wasm', path.join(tmp, 'sub-wasm'),
      `emcmake cmake -S "${consumer}" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVOR_SUBPROJECT="${src}" -DVOR_FETCHCONTENT=ON -DVOR_LZ4_SOURCE_DIR="${lz4}"`,
      'node "$B/app.cjs"'],
  ];
  for (const [flavour, dir, configure, runApp] of builds) {
    sh(configure, tmp, { B: dir });
    const targets = sh('ninja -C "$B" -t targets all', tmp, { B: dir })
      .split('\n').map((l) => l.split(':')[0].trim()).filter((t) => t && !t.includes('/') && !t.includes('.') && !t.startsWith('cmake_object_order_depends_target_'));
    const extra = targets.filter((t) => !['all', 'app', 'clean', 'help', 'install', 'list_install_components',
      'rebuild_cache', 'edit_cache', 'vor_objects', 'vor_static', 'vor_shared', 'vor_lz4_wasm'].includes(t) && !t.startsWith('install/'));
    assert.deepEqual(extra, [], `${flavour}: targets besides vor's libraries and the app: ${extra.join(' ')}`);
    sh('cmake --build "$B" -j 2', tmp, { B: dir });
    assert.match(sh(runApp, tmp, { B: dir }), /^app: 3 frames, 6 scopes$/m, `${flavour}: the app runs`);
  }
  const after = snapshot(src);
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((f) => before.get(f) !== after.get(f));
  assert.deepEqual(changed, [], 'files added or changed in the source tree');
});
