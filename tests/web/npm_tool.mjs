// Runs a tool installed from package-lock.json (tsc, eslint) for the lint ctests, from the
// repository's node_modules, with the arguments given; exits with its status. Without the package
// it fails saying so, rather than passing without having checked anything.
//
//   node tests/web/npm_tool.mjs typescript/bin/tsc --noEmit -p tsconfig.json

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [bin, ...args] = process.argv.slice(2);
const script = path.join(repo, 'node_modules', bin ?? '');
if (!bin || !fs.existsSync(script)) {
  console.error(`FAIL: ${bin ?? '(no tool given)'} is not installed in node_modules (run scripts/setup.sh: npm ci)`);
  process.exit(1);
}
const run = spawnSync(process.execPath, [script, ...args], { cwd: repo, stdio: 'inherit' });
if (run.error) { console.error(`FAIL: ${bin}: ${run.error.message}`); process.exit(1); }
if (run.status === 0) console.log(`${path.basename(bin)} ${args.join(' ')}: no problems`);
process.exit(run.status ?? 1);
