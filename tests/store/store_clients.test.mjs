// store_clients.test.mjs - the store's clients against the real server: `vor upload` (stored,
// resumed after a cut, refused with the server's reason), `vor list`, and the live upload of a
// running program (VOR_UPLOAD): stored byte for byte like its local VOR_RECORD capture, through a
// server that starts late, restarts in the middle of the run, or never comes - the program runs
// to its end either way, its local capture complete.
//
// Run: VOR_SERVER_HOST_BIN=... VOR_BIN=... VOR_TRAINING_LOOP=... node tests/store/store_clients.test.mjs
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { SLOW, makeTmp, sleep, startServer } from '../server/server_harness.mjs';
import {
  TRAINING_LOOP, VOR_BIN, freePort, randomKey, recordCapture, search, storedBytes, upload, waitIndexed,
} from './store_harness.mjs';

const root = makeTmp('clients');
after(() => fs.rmSync(root, { recursive: true, force: true }));

function run(bin, args, env = {}) {
  return new Promise((resolve) => {
    execFile(bin, args, { env: { ...process.env, ...env }, timeout: 120000 * SLOW }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

describe('vor upload and vor list', () => {
  test('upload, resume after a cut upload, already stored, refusals; list with filters', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'st-'));
    const cap = path.join(root, 'cli.vor');
    const bytes = recordCapture(root, 'cli.vor', 60);
    const srv = await startServer(['--store', dir, '--site', root]);
    try {
      const url = srv.http;
      const up = await run(VOR_BIN, ['upload', cap, '--server', url, '--project', 'cli', '--tag', 'branch=main', '--tag', 'os=linux']);
      assert.equal(up.code, 0, up.stderr);
      const id = /stored as (\S+) \((\d+) bytes, complete\)/.exec(up.stdout)?.[1];
      assert.ok(id, up.stdout);
      assert.ok(storedBytes(dir, id).equals(bytes));
      const again = await run(VOR_BIN, ['upload', cap, '--server', url, '--project', 'cli']);
      assert.match(again.stdout, /already stored as/);

      // A second capture cut halfway by a dropped connection, with the key `vor upload` uses:
      // the command resumes it from the server's copy.
      const other = recordCapture(root, 'other.vor', 40);
      const crypto = await import('node:crypto');
      const body = other.readUInt32LE(12);
      const key = crypto.createHash('sha1').update(other.subarray(0, 24 + body)).digest('hex');
      await upload(srv.ws, other, { key, project: 'cli' }, { stopAt: Math.floor(other.length / 2), chunk: 500 }).done;
      await sleep(200);
      const resumed = await run(VOR_BIN, ['upload', path.join(root, 'other.vor'), '--server', url, '--project', 'cli']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /resuming at byte \d+ of \d+/);
      const id2 = /stored as (\S+)/.exec(resumed.stdout)[1];
      assert.ok(storedBytes(dir, id2).equals(other));

      // Refusals carry the server's reason; exit 2. A damaged capture:
      const damaged = Buffer.from(bytes);
      damaged[damaged.length - 200] ^= 1;
      fs.writeFileSync(path.join(root, 'damaged.vor'), damaged);
      const bad = await run(VOR_BIN, ['upload', path.join(root, 'damaged.vor'), '--server', url, '--project', 'x']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /refused by .*damaged record/);
      const unreachable = await run(VOR_BIN, ['upload', cap, '--server', 'http://127.0.0.1:1', '--project', 'x']);
      assert.equal(unreachable.code, 1);

      await waitIndexed(srv, 'project=cli', 2);
      const list = await run(VOR_BIN, ['list', '--server', url, '--project', 'cli', '--tag', 'branch=main']);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, new RegExp(`${id} .* training_loop .* 60 .* properly .*`));
      assert.match(list.stdout, /1 shown of 1/);
      const json = JSON.parse((await run(VOR_BIN, ['list', '--server', url, '--scope', 'weight upd', '--json'])).stdout);
      assert.equal(json.captures.length, 2);
      const bogus = await run(VOR_BIN, ['list', '--server', url, '--sort', 'size']);
      assert.equal(bogus.code, 2);
      assert.match(bogus.stderr, /sort: 'size'/);
    } finally {
      assert.equal((await srv.stop()).code, 0);
    }
  });
});

describe('live upload (VOR_UPLOAD)', () => {
  const liveEnv = (port, local, extra = {}) => ({
    VOR_UPLOAD: `http://127.0.0.1:${port}`, VOR_PROJECT: 'live', VOR_TAGS: 'run=test,kind=live', VOR_RECORD: local,
    VOR_RECORD_FLAME: '1', ...extra,
  });

  async function theUpload(srv) {
    const [c] = await waitIndexed(srv, 'project=live', 1);
    return c;
  }

  test('stored byte for byte like the local capture, tags and all', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'live-'));
    const srv = await startServer(['--store', dir, '--site', root]);
    try {
      const local = path.join(root, 'live1.vor');
      // The exit flush waits until the server acknowledged everything, at most VOR_UPLOAD_FLUSH_MS:
      // generous here, so a loaded machine does not cut the upload (which the product does, by design).
      const r = await run(TRAINING_LOOP, ['200'], liveEnv(srv.port, local, { VOR_UPLOAD_FLUSH_MS: String(30000 * SLOW) }));
      assert.equal(r.code, 0, r.stderr);
      const c = await theUpload(srv);
      assert.deepEqual(c.tags, { run: 'test', kind: 'live' });
      assert.equal(c.ended, 'properly');
      assert.ok(storedBytes(dir, c.id).equals(fs.readFileSync(local)));
    } finally {
      assert.equal((await srv.stop()).code, 0);
    }
  });

  test('no server at all: the program runs to its end, says so once, its local capture complete', async () => {
    const port = await freePort();
    const local = path.join(root, 'live2.vor');
    const t0 = performance.now();
    const r = await run(TRAINING_LOOP, ['100'], liveEnv(port, local, { VOR_UPLOAD_FLUSH_MS: '300' }));
    assert.equal(r.code, 0);
    assert.equal((r.stderr.match(/UPLOAD_PROBLEM/g) || []).length, 1, r.stderr);
    const s = JSON.parse((await run(VOR_BIN, ['summary', '--json', local])).stdout);
    assert.equal(s.frames, 100);
    assert.ok(performance.now() - t0 < 30000 * SLOW);
  });

  test('a server that restarts in the middle of the run: the upload resumes, nothing lost', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'live-'));
    const port = await freePort();
    let srv = await startServer(['--store', dir, '--site', root, '--port', String(port)]);
    const local = path.join(root, 'live3.vor');
    const prog = spawn(TRAINING_LOOP, ['1500'], { env: { ...process.env, ...liveEnv(port, local, { VOR_UPLOAD_FLUSH_MS: '10000' }) },
      stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    prog.stderr.on('data', (d) => { stderr += d; });
    const exited = new Promise((resolve) => prog.on('exit', (code) => resolve(code)));
    try {
      await sleep(1200);
      assert.equal((await srv.stop()).code, 0);
      await sleep(700); // the program goes on meanwhile; its frames wait in the upload buffer
      srv = await startServer(['--store', dir, '--site', root, '--port', String(port)]);
      assert.equal(await exited, 0, stderr);
      const c = await theUpload(srv);
      assert.equal(c.ended, 'properly');
      assert.ok(storedBytes(dir, c.id).equals(fs.readFileSync(local)), 'the upload is the local capture, byte for byte');
    } finally {
      prog.kill('SIGKILL');
      assert.equal((await srv.stop()).code, 0);
    }
  });
});
