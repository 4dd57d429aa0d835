// The hot path under node (`make bench`): runs the wasm build of bench_hot_path.c, which prints
// each figure as a ratio to the floor measured in the same process (two emscripten_get_now()
// reads and two stores in a noinline function). Node runs with --no-liftoff --no-wasm-tier-up,
// the optimised code from the start. Needs the wasm build (sh scripts/build-wasm.sh).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const program = path.join(repo, 'build/wasm/bin/bench_hot_path.cjs');
if (!fs.existsSync(program)) {
  console.log(`wasm hot path bench: skipped (${program} missing: build the wasm flavour, sh scripts/build-wasm.sh)`);
  process.exit(0);
}
console.log(`wasm (node ${process.version}):`);
process.stdout.write(execFileSync(process.execPath, ['--no-experimental-fetch', '--no-liftoff', '--no-wasm-tier-up', program], { encoding: 'utf8' }));
