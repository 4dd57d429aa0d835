// Test-only frame view encoder: builds the version-1 bytes that the C side produces, so the panel's
// parser and the browser tests can be fed without a wasm build. Plain ES module (runs in node and in
// the browser). Not shipped: web/ never contains fake data or an encoder.
//
// encodeFrameView({
//   frameIndex, startNs, durationNs, overheadNs = 0, droppedScopes = 0,
//   values: [[columnId, value], ...],
//   threads: [{ id, scopes: [{ start, dur, site, depth }, ...] }, ...],   // scopes in end order
//   scopesPresent,               // default: true when any thread is given
//   corrupt: { magic, version, totalBytes, flags, nScopes }   // optional overrides for malformed views
// }) -> Uint8Array

const MAGIC = 0x4d524656;

export function encodeFrameView(spec) {
  const values = spec.values ?? [];
  const threads = spec.threads ?? [];
  const nScopes = threads.reduce((n, t) => n + t.scopes.length, 0);
  const tables = 64 + values.length * 16 + threads.length * 8;
  const padded = Math.ceil(tables / 8) * 8;
  const total = padded + nScopes * 24;
  const buf = new ArrayBuffer(total);
  const dv = new DataView(buf);
  const c = spec.corrupt ?? {};
  const scopesPresent = spec.scopesPresent ?? threads.length > 0;
  dv.setUint32(0, c.magic ?? MAGIC, true);
  dv.setUint32(4, c.version ?? 1, true);
  dv.setUint32(8, c.totalBytes ?? total, true);
  dv.setUint32(12, c.flags ?? (scopesPresent ? 1 : 0), true);
  dv.setFloat64(16, spec.frameIndex ?? 0, true);
  dv.setFloat64(24, spec.startNs ?? 0, true);
  dv.setFloat64(32, spec.durationNs ?? 0, true);
  dv.setFloat64(40, spec.overheadNs ?? 0, true);
  dv.setUint32(48, values.length, true);
  dv.setUint32(52, threads.length, true);
  dv.setUint32(56, c.nScopes ?? nScopes, true);
  dv.setUint32(60, spec.droppedScopes ?? 0, true);
  let off = 64;
  for (const [id, v] of values) {
    dv.setUint32(off, id, true);
    dv.setUint32(off + 4, 0, true);
    dv.setFloat64(off + 8, v, true);
    off += 16;
  }
  for (const t of threads) {
    dv.setUint32(off, t.id, true);
    dv.setUint32(off + 4, t.scopes.length, true);
    off += 8;
  }
  off = padded;
  const all = threads.flatMap((t) => t.scopes);
  for (const s of all) { dv.setFloat64(off, s.start, true); off += 8; }
  for (const s of all) { dv.setFloat64(off, s.dur, true); off += 8; }
  for (const s of all) { dv.setUint32(off, s.site, true); off += 4; }
  for (const s of all) { dv.setUint32(off, s.depth, true); off += 4; }
  return new Uint8Array(buf);
}

/**
 * Converts a call tree into scopes in end order (children before their parent), the order the C side
 * emits. node: { site, start, dur, children: [node...] }.
 */
export function treeToScopes(roots) {
  const out = [];
  const walk = (node, depth) => {
    for (const ch of node.children ?? []) walk(ch, depth + 1);
    out.push({ start: node.start, dur: node.dur, site: node.site, depth });
  };
  for (const r of roots) walk(r, 0);
  return out;
}
