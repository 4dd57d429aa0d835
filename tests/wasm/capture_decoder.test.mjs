// capture_decoder.test.mjs: the panel's decoding path against captures written by the C
// writer: wasm/site/capture_decoder.js (the C reader compiled to wasm) turns the bytes into
// declarations and frame views, and web/frame_view.js (the panel's record parser) parses
// them. Everything must agree with the reference reader's dump of the same file.
//
//   node capture_decoder.test.mjs SITE_DIR CAPTURE.vor REFERENCE.jsonl
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [siteDir, capturePath, referencePath] = process.argv.slice(2);
// Emscripten 3.1.6's ES module output reads __dirname and require under node.
globalThis.__dirname = siteDir;
globalThis.require = createRequire(import.meta.url);
const { createCaptureDecoder } = await import(path.join(siteDir, 'capture_decoder.js'));
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { parseFrameView } = await import(path.join(repo, 'web', 'frame_view.js'));
const wasmBinary = readFileSync(path.join(siteDir, 'vor_decoder.wasm'));

const bytes = readFileSync(capturePath);
const reference = readFileSync(referencePath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

// Applies declarations the way the panel does, and turns views into comparable frames.
function decodeAll(decoder, chunks) {
  const names = { columns: new Map(), sites: new Map(), threads: new Map() };
  const frames = [];
  let error;
  for (const chunk of chunks) {
    const out = decoder.push(chunk);
    for (const text of out.declarations) {
      const d = JSON.parse(text);
      for (const c of d.columns ?? []) names.columns.set(c.id, c);
      for (const s of d.sites ?? []) names.sites.set(s.id, s);
      for (const t of d.threads ?? []) names.threads.set(t.id, t);
    }
    for (const view of out.frames) {
      const f = parseFrameView(view);
      const values = {};
      for (let i = 0; i < f.columnIds.length; i++) values[names.columns.get(f.columnIds[i]).name] = f.values[i];
      const scopes = [];
      for (let t = 0; t < f.threadIds.length; t++) {
        for (let k = 0; k < f.threadScopeCounts[t]; k++) {
          const i = f.threadFirst[t] + k;
          const site = names.sites.get(f.scopeSite[i]);
          scopes.push([names.threads.get(f.threadIds[t]).name, site.name, f.scopeDepth[i], f.scopeStart[i],
            f.scopeDuration[i], site.file, site.line]);
        }
      }
      frames.push({ index: f.frameIndex, start: f.startNs, duration: f.durationNs, values, scopes });
    }
    if (out.error) { error = out.error; break; }
  }
  return { frames, error, names };
}

function chunked(data, sizes) {
  const chunks = [];
  let off = 0, k = 0;
  while (off < data.length) {
    const n = sizes[k++ % sizes.length];
    chunks.push(data.subarray(off, off + n));
    off += n;
  }
  return chunks;
}

function sameAsReference(frames) {
  assert.equal(frames.length, reference.length);
  for (let i = 0; i < frames.length; i++) {
    const got = frames[i], want = reference[i];
    assert.equal(got.index, want.index);
    assert.equal(got.start, want.start);
    assert.equal(got.duration, want.duration);
    for (const [name, value] of Object.entries(want.values)) {
      const v = got.values[name];
      if (value === 'nan') assert.ok(Number.isNaN(v), `${name} should be NaN`);
      else assert.equal(v, value, `frame ${i} ${name}`);
    }
    assert.equal(Object.keys(got.values).length, Object.keys(want.values).length);
    assert.deepEqual(got.scopes, want.scopes, `frame ${i} scopes`);
  }
}

test('decodes a whole capture in one push exactly like the reference reader', async () => {
  const decoder = await createCaptureDecoder({ wasmBinary });
  const { frames, error, names } = decodeAll(decoder, [bytes]);
  assert.equal(error, undefined);
  sameAsReference(frames);
  assert.ok(decoder.finished());
  assert.ok(names.columns.get(0).system && names.columns.get(0).name === 'frame_ms');
});

test('decodes the same capture cut into odd pieces, down to single bytes', async () => {
  const decoder = await createCaptureDecoder({ wasmBinary });
  const { frames, error } = decodeAll(decoder, chunked(bytes, [1, 7, 3, 4096, 1, 13, 65536, 2]));
  assert.equal(error, undefined);
  sameAsReference(frames);
});

test('a truncated capture yields its complete frames and no error; reset starts over', async () => {
  const decoder = await createCaptureDecoder({ wasmBinary });
  const cut = Math.floor(bytes.length * 0.6);
  const partial = decodeAll(decoder, [bytes.subarray(0, cut)]);
  assert.equal(partial.error, undefined);
  assert.ok(partial.frames.length > 0 && partial.frames.length < reference.length);
  decoder.reset();
  const again = decodeAll(decoder, [bytes]);
  sameAsReference(again.frames);
});

test('corrupt and foreign input give an error naming the problem', async () => {
  const decoder = await createCaptureDecoder({ wasmBinary });
  const text = new TextEncoder().encode('this is not a capture at all, just text\n');
  const r = decoder.push(text);
  assert.match(r.error, /not a vor capture/);
  assert.equal(decoder.push(bytes).error, r.error); // stays in the error state until reset
  decoder.reset();
  const badHeader = Uint8Array.from(bytes);
  badHeader[30] ^= 0xff; // inside the header body
  assert.match(decodeAll(decoder, [badHeader]).error, /header check value does not match/);
  // A damaged record (format 1.1) costs that record only: no error, reported by damage().
  decoder.reset();
  const damaged = Uint8Array.from(bytes);
  damaged[Math.floor(damaged.length / 2)] ^= 0xff;
  const out = decodeAll(decoder, [damaged]);
  assert.equal(out.error, undefined);
  assert.equal(out.frames.length, reference.length - 1);
  const { count, reports } = decoder.damage();
  assert.equal(count, 1);
  assert.match(reports[0], /^damaged record at byte \d+ \(\d+ bytes skipped\): /);
});
