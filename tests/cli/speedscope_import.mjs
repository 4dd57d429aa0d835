// speedscope_import.mjs: loads a file with speedscope's own importer (the speedscope npm
// package, a devDependency in package.json) under node and prints what speedscope makes of
// it, as JSON on stdout, for test_cli_speedscope.py to compare with `vor summary --json`.
//
//     node speedscope_import.mjs SPEEDSCOPE_PACKAGE_DIR FILE
//
// The package ships speedscope as one browser bundle; its importer is the bundle's
// importProfileGroupFromText (what the app calls on a dropped file). The bundle is run in a
// vm context with just enough of a browser around it; the line that defines the importer's
// entry point is found by what it does (not by its minified name) and made visible. The app
// itself fails to start without a DOM, after the importer exists: that failure is ignored.
// Output: {"name", "warnings": [...], "profiles": [{"name", "unit", "total", "frames": [{"name", "file",
// "line", "total", "self"}]}]} or an error on stderr and exit 1.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

const [packageDir, file] = process.argv.slice(2);
const release = path.join(packageDir, 'dist', 'release');
const bundle = fs.readdirSync(release).find((f) => /^speedscope-[\w-]+\.js$/.test(f));
if (!bundle) {
  console.error(`no speedscope bundle in ${release}`);
  process.exit(1);
}
let source = fs.readFileSync(path.join(release, bundle), 'utf8');
const entry = source.match(
  /async function ([\w$]+)\(([\w$]+),([\w$]+)\)\{return\(await ([\w$]+)\)\.importProfileGroupFromText\(\2,\3\)\}/,
);
if (!entry) {
  console.error(`the importer's entry point was not found in ${bundle}`);
  process.exit(1);
}
source = source.replace(entry[0], `${entry[0]};globalThis.__vorImport=${entry[1]};`);

const warnings = [];
const inert = new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : inert),
  apply: () => inert,
  construct: () => inert,
});
const context = {
  // speedscope logs which importer it chose; its warnings (events it could not nest) are
  // part of the output.
  console: { ...console, log() {}, info() {}, warn: (...a) => warnings.push(a.map(String).join(' ')) },
  TextDecoder,
  TextEncoder,
  URL,
  setTimeout,
  clearTimeout,
  queueMicrotask,
  window: {
    location: { hash: '', protocol: 'file:', href: 'file:///speedscope' },
    addEventListener() {},
    removeEventListener() {},
    devicePixelRatio: 1,
    localStorage: { getItem: () => null, setItem() {} },
  },
  document: inert,
  navigator: { userAgent: 'node', platform: 'linux' },
  requestAnimationFrame() {},
};
context.globalThis = context;
context.self = context;
vm.createContext(context);
try {
  vm.runInContext(source, context);
} catch {
  // The app's start-up needs a DOM; the importer was made visible before it.
}
if (typeof context.__vorImport !== 'function') {
  console.error('the importer did not load');
  process.exit(1);
}
const group = await context.__vorImport(path.basename(file), fs.readFileSync(file, 'utf8'));
if (!group) {
  console.error('speedscope did not recognise the file');
  process.exit(1);
}
const out = { name: group.name, warnings, profiles: [] };
for (const p of group.profiles) {
  const frames = [];
  p.forEachFrame((f) =>
    frames.push({ name: f.name, file: f.file ?? null, line: f.line ?? null, total: f.getTotalWeight(), self: f.getSelfWeight() }),
  );
  out.profiles.push({ name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), frames });
}
process.stdout.write(JSON.stringify(out));
