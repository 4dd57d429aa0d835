// thirdparty.bench.mjs: what instrumenting a whole real library costs (docs/PERFORMANCE.md,
// "Whole libraries"). The drivers of tests/thirdparty (Debian's libzstd and Lua 5.4, built by
// tests/thirdparty/build.sh into build/thirdparty), natively and as wasm under node, in four
// builds that differ only in instrumentation:
//   uninstrumented   no scope at all (the driver with -DVOR_DISABLE), the floor
//   hand             the driver's hand-placed scopes (a handful per step)
//   whole, off       the library compiled with -finstrument-functions, collection off
//                    (vor_enable never called: the hooks return at once)
//   whole, collecting  collection on, no output: the hooks and frame assembly alone
//   whole, recording the same, recording a capture with flame frames (VOR_RECORD,
//                    VOR_RECORD_FLAME=1) of every scope
// Each program runs --warmup steps first, then the timed steps; the driver prints the CPU time
// they took (steps_cpu_ns: natively the process's, under node process.cpuUsage(); no start-up,
// no wasm compilation), which unlike wall time does not count waiting for a core on this
// loaded machine. Rounds interleave the builds (each round
// starting with the next one), and each figure is the median over the rounds of its ratio to
// the uninstrumented run of the same round, because this machine is shared and noisy. Lua runs its tables and strings steps only
// (--kinds 01): until vor closes scopes a longjmp skipped, its error steps stop recording.
//
//   node bench/thirdparty/thirdparty.bench.mjs [--rounds N]     (also run by `make bench`)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const build = path.join(repo, 'build');
const argv = process.argv.slice(2);
const rounds = argv[0] === '--rounds' ? Number(argv[1]) : 7;
if (!(rounds >= 1)) {
  console.error('usage: node bench/thirdparty/thirdparty.bench.mjs [--rounds N]');
  process.exit(2);
}

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r.stdout;
}

const built = run('sh', [path.join(repo, 'tests/thirdparty/build.sh'), path.join(build, 'native'), path.join(build, 'wasm'), build]);
process.stdout.write(built);

// Workloads: about 100,000 function calls per step, room for them in vor's buffers; enough
// steps that the uninstrumented run of each flavour takes tens of milliseconds (a time slice
// of this loaded machine is several), few enough that wasm recording stays a few seconds.
const LIBS = {
  zstd: { args: ['--scale', '4', '--warmup', '4'], steps: { native: 200, wasm: 100 } },
  lua: { args: ['--scale', '10', '--kinds', '01', '--warmup', '2'], steps: { native: 64, wasm: 60 } },
};
const CAPACITY = ['--scopes-per-frame', String(1 << 20)];
// V8 runs wasm first with its baseline compiler (Liftoff) and recompiles hot functions in the
// background: a few warm-up steps are not enough to leave that phase (100 uninstrumented zstd
// steps took 85-97 ms of CPU with it, 12-16 ms without). The optimising compiler alone, up
// front, measures the steady state a long-running program reaches.
const NODE_FLAGS = ['--no-liftoff', '--no-wasm-tier-up'];
const BUILDS = [
  ['uninstrumented', 'uninstrumented', []],
  ['hand-placed scopes', 'hand', []],
  ['-finstrument-functions, collection off', 'whole', ['--collection-off']],
  ['-finstrument-functions, collecting, no output', 'whole', []],
  ['-finstrument-functions, recording', 'whole', []],
];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vor-thirdparty-bench-'));
const vor = path.join(build, 'native/bin/vor');

function once(flavour, lib, program, extra, record) {
  const args = [...LIBS[lib].args, '--steps', String(LIBS[lib].steps[flavour]), ...CAPACITY, ...extra];
  const capture = path.join(tmp, `${flavour}-${lib}.vor`);
  const env = record ? { VOR_RECORD: capture, VOR_RECORD_FLAME: '1' } : {};
  const out = flavour === 'native'
    ? run(path.join(build, 'thirdparty/native/bin', `${lib}_${program}`), args, env)
    : run('node', [...NODE_FLAGS, path.join(build, 'thirdparty/wasm/bin', `${lib}_${program}.cjs`), ...args], env);
  // The process's CPU time over the steps (waiting for a core is not counted).
  const ns = Number(/^steps_cpu_ns (\d+)$/m.exec(out)?.[1]);
  if (!(ns > 0)) throw new Error(`no steps_cpu_ns from ${lib}_${program} (${flavour})`);
  let scopes = null;
  if (record) {
    const summary = JSON.parse(run(vor, ['summary', capture, '--json', '--top', '1']));
    scopes = summary.scopes + summary.dropped_scopes;
    if (summary.dropped_scopes) console.log(`note: ${flavour} ${lib}: ${summary.dropped_scopes} scopes dropped`);
  }
  return { ns, scopes };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (ns) => (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`machine: ${os.arch()}, ${os.cpus().length} cores, ${cpu}; node ${process.version}; ${new Date().toISOString().slice(0, 10)}`);
console.log(`${rounds} rounds; median of per-round ratios to the uninstrumented build; times: medians of the timed ` +
  'steps (CPU time); load average before: ' + os.loadavg().map((x) => x.toFixed(1)).join(' '));
for (const flavour of ['native', 'wasm']) {
  for (const lib of Object.keys(LIBS)) {
    const times = BUILDS.map(() => []);
    const ratios = BUILDS.map(() => []);
    let scopes = 0;
    for (let r = 0; r < rounds; r++) {
      // Each round starts with another build, so no build always runs first (cold caches).
      const row = new Array(BUILDS.length);
      for (let k = 0; k < BUILDS.length; k++) {
        const i = (r + k) % BUILDS.length;
        const [, program, extra] = BUILDS[i];
        row[i] = once(flavour, lib, program, extra, i === BUILDS.length - 1);
      }
      scopes = row[row.length - 1].scopes;
      row.forEach((x, i) => {
        times[i].push(x.ns);
        ratios[i].push(x.ns / row[0].ns);
      });
    }
    const steps = LIBS[lib].steps[flavour];
    const warmup = Number(LIBS[lib].args[LIBS[lib].args.indexOf('--warmup') + 1]);
    const perStep = scopes / (steps + warmup);
    console.log(`\n${flavour === 'native' ? 'native (gcc -O2)' : `wasm under node ${NODE_FLAGS.join(' ')} (emcc -O2)`}, ${lib} ` +
      `${LIBS[lib].args.join(' ')} --steps ${steps}: ${Math.round(perStep).toLocaleString('en-US')} function scopes per step`);
    console.log('| build | CPU time of the steps | × uninstrumented | per function call |');
    console.log('|---|---|---|---|');
    BUILDS.forEach(([label], i) => {
      const t = median(times[i]);
      const perScope = BUILDS[i][1] === 'whole' && scopes ? `${((t - median(times[0])) / (perStep * steps)).toFixed(0)} ns` : '';
      console.log(`| ${label} | ${ms(t)} ms | ${median(ratios[i]).toFixed(2)} | ${perScope} |`);
    });
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
