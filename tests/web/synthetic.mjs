// Deterministic synthetic sessions for tests and the draw benchmark: declarations plus frame views
// (via the test encoder) that look like a game or training loop: three threads with nested scopes,
// system columns, user metrics including a diverging loss (NaN, +Infinity), a few slow frames, and
// metrics-only frames. Test-only: the panel never ships fake data.

import { encodeFrameView, treeToScopes } from './frame_view_encoder.mjs';

export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const COLUMNS = [
  { id: 0, name: 'frame_ms', unit: 'ms', system: true },
  { id: 1, name: 'memory_mb', unit: 'MB', system: true },
  { id: 2, name: 'wasm_heap_mb', unit: 'MB', system: true },
  { id: 3, name: 'io_ms', unit: 'ms', system: true },
  { id: 9, name: 'loss', unit: '', system: false },
  { id: 10, name: 'tokens_per_s', unit: 'tok/s', system: false },
];

const SITE_NAMES = [
  ['frame', 'main.c', 40], ['update', 'game.c', 12], ['physics_step', 'physics.c', 88],
  ['broadphase', 'physics.c', 140], ['solve_contacts', 'physics.c', 201], ['ai_think', 'ai.c', 33],
  ['pathfind', 'ai.c', 97], ['render', 'render.c', 20], ['cull', 'render.c', 64],
  ['draw_batches', 'render.c', 130], ['submit_draw', 'render.c', 177], ['present', 'render.c', 250],
  ['decode_chunk', 'stream.c', 15], ['upload_texture', 'gpu.c', 301], ['load_asset', 'assets.c', 58],
  ['parse_json_config_with_a_rather_long_function_name', 'config.c', 9], ['audio_mix', 'audio.c', 44],
  ['gc_sweep', 'alloc.c', 71],
];

export const SITES = SITE_NAMES.map(([name, file, line], i) => ({ id: i + 1, name, function: name, file, line }));
const S = Object.fromEntries(SITES.map((s) => [s.name, s.id]));

export const THREADS = [{ id: 0, name: 'main' }, { id: 1, name: 'render' }, { id: 2, name: 'worker-1' }];

export function declarations() {
  return { columns: COLUMNS, sites: SITES, threads: THREADS };
}

// Lays out `count` children sequentially inside [start, start + dur), covering ~fill of it.
function children(rng, start, dur, count, fill = 0.85) {
  const w = Array.from({ length: count }, () => 0.3 + rng());
  const sum = w.reduce((a, b) => a + b, 0);
  const busy = dur * fill;
  const gap = count > 0 ? (dur - busy) / (count + 1) : 0;
  const out = [];
  let t = start + gap;
  for (let i = 0; i < count; i++) {
    const d = (busy * w[i]) / sum;
    out.push([t, d]);
    t += d + gap;
  }
  return out;
}

/** Scope trees for one frame with about `target` scopes on the main thread. */
function frameTrees(rng, start, dur, target) {
  const main = { site: S.frame, start, dur, children: [] };
  const phases = children(rng, start, dur, 3, 0.95);
  const phaseSites = [S.update, S.render, S.present];
  const leafSites = [[S.physics_step, S.ai_think, S.pathfind], [S.cull, S.draw_batches, S.upload_texture], [S.submit_draw]];
  const perPhase = Math.max(1, Math.floor((target - 4) / 3));
  // each phase: k mid-level children, each with m leaves (k * (m + 1) ~ perPhase)
  const k = Math.max(1, Math.min(12, Math.round(Math.sqrt(perPhase / 4))));
  const m = Math.max(0, Math.floor(perPhase / k) - 1);
  phases.forEach(([ps, pd], p) => {
    const phase = { site: phaseSites[p], start: ps, dur: pd, children: [] };
    for (const [cs, cd] of children(rng, ps, pd, k)) {
      const mid = { site: leafSites[p][Math.floor(rng() * leafSites[p].length)], start: cs, dur: cd, children: [] };
      for (const [ls, ld] of children(rng, cs, cd, m, 0.9)) {
        mid.children.push({ site: rng() < 0.5 ? S.submit_draw : S.solve_contacts, start: ls, dur: ld });
      }
      phase.children.push(mid);
    }
    main.children.push(phase);
  });
  const render = { site: S.render, start: start + dur * 0.1, dur: dur * 0.7, children: [] };
  for (const [cs, cd] of children(rng, render.start, render.dur, 6)) {
    render.children.push({
      site: rng() < 0.5 ? S.draw_batches : S.upload_texture, start: cs, dur: cd,
      children: children(rng, cs, cd, 3).map(([a, b]) => ({ site: S.submit_draw, start: a, dur: b })),
    });
  }
  const worker = [];
  for (const [cs, cd] of children(rng, start, dur, 2, 0.6)) {
    worker.push({
      site: rng() < 0.3 ? S.parse_json_config_with_a_rather_long_function_name : S.load_asset, start: cs, dur: cd,
      children: [{ site: S.decode_chunk, start: cs + cd * 0.05, dur: cd * 0.6 }],
    });
  }
  return [
    { id: 0, scopes: treeToScopes([main]) },
    { id: 1, scopes: treeToScopes([render]) },
    { id: 2, scopes: treeToScopes(worker) },
  ];
}

/**
 * A session of `frames` frame views. options: seed, scopesPerFrame (main thread, ~), flameEvery
 * (a flame frame on 1 in N; others metrics-only), slowFrames ({frameIndex: ms}), lossNaNAt,
 * lossInfAt, overheadNs (per frame; 0 = unknown), bigFrameAt + bigFrameScopes (one heavy frame).
 * Returns {declarations, frames: Uint8Array[], meta: [{frameIndex, startNs, durationNs}]}.
 */
export function generateSession({
  frames = 600, seed = 1, scopesPerFrame = 60, flameEvery = 1, slowFrames = { 137: 48, 420: 33 },
  lossNaNAt = 500, lossInfAt = 510, overheadNs = 14000, bigFrameAt = -1, bigFrameScopes = 0, startIndex = 0,
} = {}) {
  const rng = mulberry32(seed);
  const out = [];
  const meta = [];
  let t = 1e9;
  let mem = 180;
  for (let f = 0; f < frames; f++) {
    const index = startIndex + f;
    let ms = 12 + rng() * 4 + (rng() < 0.05 ? rng() * 6 : 0);
    if (slowFrames[index] !== undefined) ms = slowFrames[index];
    const dur = ms * 1e6;
    mem += (rng() - 0.48) * 0.8;
    let loss = 2.5 * Math.exp(-index / 400) + rng() * 0.05;
    if (index === lossNaNAt) loss = NaN;
    if (index === lossInfAt) loss = Infinity;
    const values = [[0, ms], [1, mem], [2, 64 + index * 0.01], [3, rng() < 0.1 ? rng() * 3 : 0], [9, loss], [10, 4000 + rng() * 800]];
    const big = index === bigFrameAt;
    const withFlame = big || (flameEvery > 0 && index % flameEvery === 0);
    const threads = withFlame ? frameTrees(rng, t, dur, big ? bigFrameScopes : scopesPerFrame) : [];
    out.push(encodeFrameView({
      frameIndex: index, startNs: t, durationNs: dur, overheadNs, values, threads, scopesPresent: withFlame,
    }));
    meta.push({ frameIndex: index, startNs: t, durationNs: dur });
    t += dur;
  }
  return { declarations: declarations(), frames: out, meta };
}
