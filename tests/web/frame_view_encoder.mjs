// Test-only frame view encoder: builds the version-2 bytes that the C side produces (docs/FORMAT.md
// section 7), so the panel's parser and the browser tests can be fed without a wasm build. Plain ES
// module (runs in node and in the browser). Not shipped: web/ never contains fake data or an encoder.
//
// encodeFrameView({
//   frameIndex, startNs, durationNs, overheadNs = 0, droppedScopes = 0,
//   values: [[columnId, value], ...],
//   drops: [[cause, threadId, count], ...],
//   threads: [{ id, scopes: [{ start, dur, site, depth, parent, flags }, ...],   // ended, in end order
//               open: [{ start, dur, site }, ...] }, ...],                       // open, outermost first
//   scopesPresent,               // default: true when any thread is given
//   corrupt: { magic, version, totalBytes, flags, nScopes, nOpen }   // optional overrides for malformed views
// }) -> Uint8Array
// A scope's parent is an index among its thread's scopes (ended then open), 0xFFFFFFFF for none;
// without one it is none at depth 0, else 0xFFFFFFFE (unknown). Open scopes get depth = position, parent = the one before.

const MAGIC = 0x4d524656;
const PARENT_NONE = 0xffffffff;
const PARENT_UNKNOWN = 0xfffffffe;

export function encodeFrameView(spec) {
  const values = spec.values ?? [];
  const drops = spec.drops ?? [];
  const threads = spec.threads ?? [];
  const nEnded = threads.reduce((n, t) => n + t.scopes.length, 0);
  const nOpen = threads.reduce((n, t) => n + (t.open ?? []).length, 0);
  const tables = 72 + values.length * 16 + drops.length * 16 + threads.length * 12;
  const padded = Math.ceil(tables / 8) * 8;
  const total = padded + (nEnded + nOpen) * 32;
  const buf = new ArrayBuffer(total);
  const dv = new DataView(buf);
  const c = spec.corrupt ?? {};
  const scopesPresent = spec.scopesPresent ?? threads.length > 0;
  dv.setUint32(0, c.magic ?? MAGIC, true);
  dv.setUint32(4, c.version ?? 2, true);
  dv.setUint32(8, c.totalBytes ?? total, true);
  dv.setUint32(12, c.flags ?? (scopesPresent ? 1 : 0), true);
  dv.setFloat64(16, spec.frameIndex ?? 0, true);
  dv.setFloat64(24, spec.startNs ?? 0, true);
  dv.setFloat64(32, spec.durationNs ?? 0, true);
  dv.setFloat64(40, spec.overheadNs ?? 0, true);
  dv.setUint32(48, values.length, true);
  dv.setUint32(52, threads.length, true);
  dv.setUint32(56, c.nScopes ?? nEnded, true);
  dv.setUint32(60, spec.droppedScopes ?? 0, true);
  dv.setUint32(64, c.nOpen ?? nOpen, true);
  dv.setUint32(68, drops.length, true);
  let off = 72;
  for (const [id, v] of values) {
    dv.setUint32(off, id, true);
    dv.setUint32(off + 4, 0, true);
    dv.setFloat64(off + 8, v, true);
    off += 16;
  }
  for (const [cause, thread, count] of drops) {
    dv.setUint32(off, cause, true);
    dv.setUint32(off + 4, thread, true);
    dv.setFloat64(off + 8, count, true);
    off += 16;
  }
  for (const t of threads) {
    dv.setUint32(off, t.id, true);
    dv.setUint32(off + 4, t.scopes.length, true);
    dv.setUint32(off + 8, (t.open ?? []).length, true);
    off += 12;
  }
  off = padded;
  const all = threads.flatMap((t) => [
    ...t.scopes,
    ...(t.open ?? []).map((s, k) => ({
      depth: k, parent: k === 0 ? PARENT_NONE : t.scopes.length + k - 1, flags: 1, ...s,
    })),
  ]);
  for (const s of all) { dv.setFloat64(off, s.start, true); off += 8; }
  for (const s of all) { dv.setFloat64(off, s.dur, true); off += 8; }
  for (const s of all) { dv.setUint32(off, s.site, true); off += 4; }
  for (const s of all) { dv.setUint32(off, s.depth, true); off += 4; }
  for (const s of all) { dv.setUint32(off, s.parent ?? (s.depth === 0 ? PARENT_NONE : PARENT_UNKNOWN), true); off += 4; }
  for (const s of all) { dv.setUint32(off, s.flags ?? 0, true); off += 4; }
  return new Uint8Array(buf);
}

/**
 * Converts a call tree into scopes in end order (children before their parent), the order the C side
 * emits, each with its parent's index in the list. node: { site, start, dur, children: [node...] }.
 */
export function treeToScopes(roots) {
  const out = [];
  const walk = (node, depth) => {
    const children = (node.children ?? []).map((ch) => walk(ch, depth + 1));
    const index = out.length;
    out.push({ start: node.start, dur: node.dur, site: node.site, depth, parent: depth === 0 ? PARENT_NONE : undefined });
    for (const c of children) out[c].parent = index;
    return index;
  };
  for (const r of roots) walk(r, 0);
  return out;
}
