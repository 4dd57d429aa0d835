// A test-only stand-in for the wasm capture decoder, to exercise the websocket and file sources
// before the C reader exists. It does NOT read .vor: it reads a trivial test container,
//   'VTST' then records [u8 kind][u32 length LE][payload], kind 1 = declarations JSON, 2 = frame view,
//   3 = end (empty payload: the writer finished the capture, like a .vor end record),
// cut anywhere across push() calls, exactly like the real decoder's interface (sources/decoder.js),
// finished() included.
// The browser tests serve this file as /capture_decoder.js. Never shipped in web/.

const MAGIC = [0x56, 0x54, 0x53, 0x54]; // 'VTST'

/** Builds a test container from declarations (objects) and frame views (Uint8Array); `end`: append the end record. */
export function buildTestCapture(declarations, frames, { end = true } = {}) {
  const enc = new TextEncoder();
  const parts = [Uint8Array.from(MAGIC)];
  const record = (kind, payload) => {
    const h = new Uint8Array(5);
    h[0] = kind;
    new DataView(h.buffer).setUint32(1, payload.byteLength, true);
    parts.push(h, payload);
  };
  for (const d of [].concat(declarations)) record(1, enc.encode(JSON.stringify(d)));
  for (const f of frames) record(2, f);
  if (end) record(3, new Uint8Array(0));
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) { out.set(p, off); off += p.byteLength; }
  return out;
}

export function createCaptureDecoder() {
  let buf = new Uint8Array(0);
  let headerSeen = false;
  let ended = false;
  let failed = null;
  const dec = new TextDecoder();
  return {
    push(bytes) {
      if (failed) return { declarations: [], frames: [], error: failed };
      const next = new Uint8Array(buf.byteLength + bytes.byteLength);
      next.set(buf, 0);
      next.set(bytes, buf.byteLength);
      buf = next;
      const out = { declarations: [], frames: [] };
      let off = 0;
      if (!headerSeen) {
        if (buf.byteLength < 4) return out;
        if (MAGIC.some((b, i) => buf[i] !== b)) { failed = 'not a test capture (bad magic)'; return { ...out, error: failed }; }
        headerSeen = true;
        off = 4;
      }
      while (buf.byteLength - off >= 5) {
        const kind = buf[off];
        const len = new DataView(buf.buffer, buf.byteOffset + off + 1, 4).getUint32(0, true);
        if (buf.byteLength - off - 5 < len) break;
        const payload = buf.slice(off + 5, off + 5 + len);
        if (kind === 1) out.declarations.push(JSON.parse(dec.decode(payload)));
        else if (kind === 2) out.frames.push(payload);
        else if (kind === 3) ended = true;
        else { failed = `unknown record kind ${kind}`; out.error = failed; break; }
        off += 5 + len;
      }
      buf = buf.slice(off);
      return out;
    },
    reset() { buf = new Uint8Array(0); headerSeen = false; ended = false; failed = null; },
    finished() { return ended; },
  };
}
