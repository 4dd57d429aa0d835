// decoder_edges.test.mjs: the panel's capture decoder (wasm/site/capture_decoder.js) on a
// capture of long_names_workload.c: a site name of 300 bytes is cut at a UTF-8 character
// boundary, the same way by the capture writer (the reference reader's dump shows what it
// stored) and by the decoder's declarations; and two threads sharing frames, whose ids are
// equal modulo 1024, are not declared again in every frame.
//
//   node decoder_edges.test.mjs SITE_DIR CAPTURE.vor REFERENCE.jsonl
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

const [siteDir, capturePath, referencePath] = process.argv.slice(2);
// Emscripten 3.1.6's ES module output reads __dirname and require under node.
globalThis.__dirname = siteDir;
globalThis.require = createRequire(import.meta.url);
const { createCaptureDecoder } = await import(path.join(siteDir, 'capture_decoder.js'));
const wasmBinary = readFileSync(path.join(siteDir, 'vor_decoder.wasm'));
const bytes = readFileSync(capturePath);
const reference = readFileSync(referencePath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

// 150 x "é" is 300 bytes; 255 bytes would end inside the 128th, so 127 are kept (254 bytes).
const CUT = 'é'.repeat(127);

async function decodeAll() {
  const decoder = await createCaptureDecoder({ wasmBinary });
  const out = decoder.push(bytes);
  assert.equal(out.error, undefined);
  return { declarations: out.declarations.map((t) => JSON.parse(t)), frames: out.frames.length };
}

test('a site name past 255 bytes is cut at a character boundary, alike in the capture and the decoder', async () => {
  const stored = new Set(reference.flatMap((f) => f.scopes.map((s) => s[1])).filter((n) => n.startsWith('é')));
  assert.deepEqual([...stored], [CUT], 'the capture keeps 127 whole characters');
  const { declarations } = await decodeAll();
  const names = declarations.flatMap((d) => (d.sites ?? []).map((s) => s.name)).filter((n) => n.startsWith('é'));
  assert.deepEqual(names, [CUT], 'the decoder declares the same name');
  assert.equal(Buffer.byteLength(CUT), 254);
});

test('threads whose ids are equal modulo 1024 are not declared again in every frame', async () => {
  const { declarations, frames } = await decodeAll();
  assert.equal(frames, reference.length);
  const threads = declarations.flatMap((d) => d.threads ?? []);
  const idOf = (name) => {
    const found = new Set(threads.filter((t) => t.name === name).map((t) => t.id));
    assert.equal(found.size, 1, `one id for ${name}`);
    return [...found][0];
  };
  const main = idOf('main'), late = idOf('late');
  assert.ok(late !== main && (late - main) % 1024 === 0,
    `the workload must give "late" an id equal to main's modulo 1024 (main ${main}, late ${late})`);
  const together = reference.filter((f) => {
    const names = new Set(f.scopes.map((s) => s[0]));
    return names.has('main') && names.has('late');
  }).length;
  assert.ok(together >= 10, `main and late share ${together} frames`);
  // 1025 threads are more than half the decoder's table (2048 slots), so it is cleared once and
  // what it held is declared again: at most twice each, not once in each of the shared frames.
  for (const [name, id] of [['main', main], ['late', late]]) {
    const n = threads.filter((t) => t.id === id).length;
    assert.ok(n >= 1 && n <= 2, `${name} (thread ${id}) declared ${n} times over ${together} shared frames`);
  }
  assert.equal(threads.filter((t) => t.name === 'churn').length, 1023, 'each churned thread declared once');
});
