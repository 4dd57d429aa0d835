// store_upload.test.mjs - the profile store (vor serve --store) over real sockets with real
// captures: uploads checked and stored byte for byte, resumed where the server's copy ends,
// indexed and searched; 20 concurrent uploads while 20 viewers watch; uploads killed at random
// points; garbage, damaged, foreign and oversized uploads; tokens; retention; the index deleted
// and rebuilt.
//
// Run: VOR_SERVER_HOST_BIN=... VOR_BIN=... VOR_TRAINING_LOOP=... node tests/store/store_upload.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SLOW, makeTmp, sleep, startServer, viewer, withTimeout } from '../server/server_harness.mjs';
import {
  VOR_BIN, lastWholeRecord, randomKey, recordCapture, recordEnds, search, storedBytes, storedFiles, upload,
  waitIndexed,
} from './store_harness.mjs';

const root = makeTmp('store');
let capA, capB; // two real captures (different runs)

before(() => {
  capA = recordCapture(root, 'a.vor', 80);
  capB = recordCapture(root, 'b.vor', 40);
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

async function withStore(args, fn, env = {}) {
  const dir = fs.mkdtempSync(path.join(root, 'st-'));
  const srv = await startServer(['--store', dir, '--site', root, ...args], env);
  try {
    return await fn(srv, dir);
  } finally {
    const r = await srv.stop();
    assert.equal(r.code, 0, `server exit ${r.code} ${r.signal}\n${r.stderr}`);
  }
}

describe('uploads', () => {
  test('a capture is stored byte for byte, indexed, found, and not sent twice', async () => {
    await withStore([], async (srv, dir) => {
      const key = randomKey();
      const up = upload(srv.ws, capA, { key, project: 'p1', name: '/home/me/a.vor', tags: { branch: 'main', gpu: 'none' } });
      const r = await up.done;
      assert.equal(r.code, 1000, r.reason);
      const done = r.messages.at(-1);
      assert.equal(done.type, 'done');
      assert.equal(done.state, 'complete');
      assert.equal(done.bytes, capA.length);
      assert.ok(storedBytes(dir, done.id).equals(capA), 'stored bytes = the file');
      const [c] = await waitIndexed(srv, 'project=p1');
      assert.equal(c.id, done.id);
      assert.equal(c.name, 'a.vor', 'only the file name is kept, not the uploader\'s path');
      assert.deepEqual(c.tags, { branch: 'main', gpu: 'none' });
      assert.equal(c.process, 'training_loop');
      assert.equal(c.platform, 'native');
      assert.equal(c.ended, 'properly');
      assert.equal(c.frames, 80);
      assert.ok(c.span_ns > 0 && c.top_self.length > 0 && c.top_total[0].name === 'train step');
      // The same summary as `vor summary` (frames, and the top scope by total).
      const summary = JSON.parse(execFileSync(VOR_BIN, ['summary', '--json', path.join(root, 'a.vor')]).toString());
      assert.equal(summary.frames, c.frames);
      assert.equal(summary.top_by_total[0].name, c.top_total[0].name);
      // Searches: full text over scope names, tags, process, dates, sorting by a scope.
      assert.equal((await search(srv, 'scope=matvec%20row')).body.captures.length, 1);
      assert.equal((await search(srv, 'scope=matv')).body.captures.length, 1, 'prefix match');
      assert.equal((await search(srv, 'scope=nosuchscope')).body.captures.length, 0);
      assert.equal((await search(srv, 'tag=branch%3Dmain')).body.captures.length, 1);
      assert.equal((await search(srv, 'tag=branch%3Ddev')).body.captures.length, 0);
      assert.equal((await search(srv, 'tag=gpu')).body.captures.length, 1, 'a tag present');
      assert.equal((await search(srv, 'process=training_loop&since=2000-01-01')).body.captures.length, 1);
      assert.equal((await search(srv, 'until=2000-01-01')).body.captures.length, 0);
      const sorted = (await search(srv, 'sort=scope:forward')).body.captures[0];
      assert.equal(sorted.sort_scope.name, 'forward');
      assert.ok(sorted.sort_scope.total_ns > 0);
      const bad = await search(srv, 'colour=red');
      assert.equal(bad.status, 400);
      assert.match(bad.body.error, /unknown query parameter 'colour'/);
      // The same capture again: answered at once.
      const again = await upload(srv.ws, capA, { key, project: 'p1' }).done;
      assert.equal(again.messages[0].type, 'done');
      assert.equal(again.messages[0].already, true);
      // One stored capture can be streamed to a viewer like any other.
      const v = viewer(`${srv.ws}/capture/${done.id}?follow=0`);
      const seen = await v.done;
      assert.ok(seen.data.equals(capA));
    });
  });

  test('20 concurrent uploads while 20 viewers watch them: every capture stored and seen byte for byte', async () => {
    await withStore([], async (srv, dir) => {
      const caps = [];
      for (let i = 0; i < 20; i++) caps.push(i % 2 ? capA : capB);
      const ups = caps.map((data, i) => upload(srv.ws, data, { key: randomKey(), project: 'many', name: 'same-name.vor',
        tags: { i: String(i) } }, { chunk: 4096, pace: 1 }));
      // Each viewer follows one upload from its first bytes, while it is being uploaded.
      const watchers = [];
      const started = await withTimeout((async () => {
        for (;;) {
          const { body } = await search(srv, 'project=many&limit=100');
          if (body.captures.length === 20) return body.captures;
          await sleep(10);
        }
      })(), 10000 * SLOW, '20 uploads to start');
      for (const c of started) watchers.push({ id: c.id, i: Number(c.tags.i), v: viewer(`${srv.ws}/capture/${c.id}`) });
      const results = await Promise.all(ups.map((u) => u.done));
      for (const r of results) assert.equal(r.messages.at(-1).type, 'done', JSON.stringify(r.messages.at(-1)));
      // Viewers follow: stop them once they have everything.
      for (const w of watchers) {
        const want = caps[w.i];
        await withTimeout((async () => { while (w.v.bytes() < want.length) await sleep(10); })(), 10000 * SLOW,
          `viewer of upload ${w.i}`);
        w.v.ws.close();
        const seen = await w.v.done;
        assert.ok(seen.data.equals(want), `viewer ${w.i} saw the capture byte for byte`);
        assert.ok(storedBytes(dir, w.id).equals(want), `upload ${w.i} stored byte for byte`);
      }
      assert.equal(new Set(started.map((c) => c.id)).size, 20, 'uploads of the same name never share a capture');
    });
  });

  test('an upload killed at random points reads back to its last complete record, then resumes', async () => {
    await withStore([], async (srv, dir) => {
      const ends = recordEnds(capA);
      const rng = crypto.createHash('sha256').update('seed').digest();
      for (let k = 0; k < 8; k++) {
        const stopAt = 8 + (rng.readUInt32LE(k * 4) % (capA.length - 8));
        const key = randomKey();
        const killed = await upload(srv.ws, capA, { key, project: 'killed' }, { stopAt, chunk: 1000 }).done;
        const id = killed.messages[0].id;
        const want = lastWholeRecord(capA, stopAt);
        // The server notices the dropped connection; what it holds is a prefix ending at a record.
        const held = await withTimeout((async () => {
          for (;;) {
            const { body } = await search(srv, `id=${id}`);
            if (body.captures[0]?.upload === 'open') return storedBytes(dir, id);
            await sleep(20);
          }
        })(), 10000 * SLOW, 'the server to see the dropped upload');
        assert.equal(held.length, want, `killed at ${stopAt}: stored ${held.length}, last whole record ends at ${want}`);
        assert.ok(held.equals(capA.subarray(0, want)));
        if (want > ends[0]) { // readable: every complete record is there
          const part = path.join(dir, `part-${k}.vor`);
          fs.writeFileSync(part, held);
          const s = JSON.parse(execFileSync(VOR_BIN, ['summary', '--json', part]).toString());
          assert.equal(s.frames, ends.filter((e) => e <= want).length - 1);
        }
        // Resume with the same key: from the server's offset to the end, byte for byte.
        const resumed = await upload(srv.ws, capA, { key, project: 'killed' }).done;
        assert.equal(resumed.offset, want);
        assert.equal(resumed.messages.at(-1).state, 'complete');
        assert.ok(storedBytes(dir, id).equals(capA));
      }
    });
  });

  test('garbage, foreign, damaged and trailing bytes are refused with a reason and leave nothing', async () => {
    await withStore([], async (srv, dir) => {
      const cases = [
        ['random bytes', crypto.randomBytes(5000), /not a vor capture/],
        ['a PNG', Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), crypto.randomBytes(100)]), /not a vor capture/],
        ['a damaged record', (() => { const b = Buffer.from(capA); b[Math.floor(b.length / 2)] ^= 0x40; return b; })(),
          /damaged record/],
        ['bytes after the end record', Buffer.concat([capA, Buffer.from('tail')]), /after the end record/],
      ];
      for (const [what, data, reason] of cases) {
        const r = await upload(srv.ws, data, { key: randomKey(), project: 'bad' }).done;
        assert.equal(r.code, 1008, `${what}: close ${r.code}`);
        const err = r.messages.find((m) => m.type === 'error');
        assert.ok(err, `${what}: an error message`);
        assert.match(err.message, reason, what);
      }
      await sleep(100);
      assert.deepEqual(storedFiles(dir), [], 'nothing stored');
      assert.equal((await search(srv, 'project=bad')).body.captures.length, 0);
      // Bytes before a hello, a bad hello.
      const noHello = await upload(srv.ws, capA, null).done;
      assert.equal(noHello.code, 1008);
      assert.match(noHello.messages[0].message, /hello/);
      const badKey = await upload(srv.ws, capA, { key: 'x' }).done;
      assert.match(badKey.messages[0].message, /key/);
    });
  });

  test('a capture over --max-capture-bytes is refused (1009) and not kept', async () => {
    await withStore(['--max-capture-bytes', '20K'], async (srv, dir) => {
      const r = await upload(srv.ws, capA, { key: randomKey(), project: 'big' }).done;
      assert.equal(r.code, 1009);
      assert.match(r.messages.find((m) => m.type === 'error').message, /size limit/);
      assert.deepEqual(storedFiles(dir), []);
    });
  });

  test('retention: the oldest captures go first when --max-store-bytes would be passed', async () => {
    const limit = Math.floor(capB.length * 2.5);
    await withStore(['--max-store-bytes', String(limit)], async (srv, dir) => {
      const ids = [];
      for (let i = 0; i < 4; i++) {
        const r = await upload(srv.ws, recordCapture(root, `r${i}.vor`, 40), { key: randomKey(), project: 'ret' }).done;
        ids.push(r.messages.at(-1).id);
        await sleep(20);
      }
      const left = (await search(srv, 'project=ret')).body.captures.map((c) => c.id).sort();
      assert.deepEqual(left, ids.slice(2).sort(), 'the two newest remain');
      assert.ok(srv.stderr().includes(`deleted capture ${ids[0]}`));
      const total = storedFiles(dir).filter((f) => f.endsWith('.vor'))
        .reduce((s, f) => s + fs.statSync(path.join(dir, 'captures', f)).size, 0);
      assert.ok(total <= limit);
    });
  });

  test('stalled and trickling uploaders do not hold up viewers or other uploads', async () => {
    await withStore([], async (srv, dir) => {
      const stored = await upload(srv.ws, capA, { key: randomKey(), project: 'v' }).done;
      const id = stored.messages.at(-1).id;
      // 10 uploaders stopped in the middle of a record (connected, never sending the rest) and 10
      // sending a byte at a time.
      const slow = [];
      for (let i = 0; i < 10; i++) slow.push(upload(srv.ws, capB, { key: randomKey(), project: 'slow' }, { stopAt: 500, chunk: 500, hold: true }));
      for (let i = 0; i < 10; i++) slow.push(upload(srv.ws, capB, { key: randomKey(), project: 'slow' }, { chunk: 1, pace: 20 }));
      await sleep(300);
      // Meanwhile whole viewers and a whole upload go through (a blocked service thread would
      // leave them waiting until the time limit, which this test's failure message names).
      for (let i = 0; i < 3; i++) {
        const r = await withTimeout(viewer(`${srv.ws}/capture/${id}?follow=0`).done, 20000 * SLOW, 'viewer with slow uploaders');
        assert.ok(r.data.equals(capA));
      }
      const other = await withTimeout(upload(srv.ws, capB, { key: randomKey(), project: 'fast' }).done, 20000 * SLOW, 'upload with slow uploaders');
      assert.equal(other.messages.at(-1).state, 'complete');
      assert.ok(storedBytes(dir, other.messages.at(-1).id).equals(capB));
      assert.equal(slow.filter((u) => u.ws.readyState === 1).length, 20, 'the slow uploaders are still connected');
      for (const u of slow) u.ws.terminate();
    });
  });

  test('a second connection with the same key takes the upload over; the capture never mixes', async () => {
    await withStore([], async (srv, dir) => {
      const key = randomKey();
      const first = upload(srv.ws, capA, { key, project: 'same' }, { stopAt: Math.floor(capA.length / 2), chunk: 1000 });
      const f = await first.done;
      // The first vanished without the server knowing yet: the second takes over at once.
      const second = await upload(srv.ws, capA, { key, project: 'same' }).done;
      assert.equal(second.messages.at(-1).state, 'complete');
      assert.ok(storedBytes(dir, f.messages[0].id).equals(capA));
    });
  });

  test('the index deleted while the server is down is rebuilt from the files', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'rebuild-'));
    let srv = await startServer(['--store', dir, '--site', root]);
    const ids = [];
    for (const [i, data] of [capA, capB].entries()) {
      const r = await upload(srv.ws, data, { key: randomKey(), project: 'rb', tags: { n: String(i) } }).done;
      ids.push(r.messages.at(-1).id);
    }
    const cut = await upload(srv.ws, capB, { key: randomKey(), project: 'rb' },
      { stopAt: Math.floor(capB.length / 2) }).done;
    ids.push(cut.messages[0].id);
    const before = await waitIndexed(srv, 'project=rb', 3);
    assert.equal((await srv.stop()).code, 0);
    for (const f of fs.readdirSync(dir)) if (f.startsWith('index.sqlite')) fs.rmSync(path.join(dir, f));
    srv = await startServer(['--store', dir, '--site', root]);
    try {
      const rebuilt = await waitIndexed(srv, 'project=rb', 3);
      const strip = (cs) => cs.map(({ id, tags, frames, span_ns, ended, top_total, bytes, upload: u }) =>
        ({ id, tags, frames, span_ns, ended, top: top_total[0]?.name, bytes, u })).sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(strip(rebuilt), strip(before));
      assert.match(srv.stderr(), /index rebuilt from 3 captures/);
      // A damaged index file is moved aside and rebuilt too.
      assert.equal((await srv.stop()).code, 0);
      fs.writeFileSync(path.join(dir, 'index.sqlite'), 'not a database at all'.repeat(100));
      srv = await startServer(['--store', dir, '--site', root]);
      assert.deepEqual(strip(await waitIndexed(srv, 'project=rb', 3)), strip(before));
      assert.ok(fs.existsSync(path.join(dir, 'index.sqlite.damaged')));
    } finally {
      assert.equal((await srv.stop()).code, 0);
    }
  });
});

describe('tokens and origins', () => {
  const token = 'a-long-enough-token-0123456789';
  let tokenFile;
  before(() => {
    tokenFile = path.join(root, 'tokens');
    fs.writeFileSync(tokenFile, `# team tokens\n${token}\n`);
  });

  test('uploads and deletes need a valid token; reads too with --token-reads', async () => {
    await withStore(['--token-file', tokenFile, '--token-reads'], async (srv) => {
      const none = await upload(srv.ws, capB, { key: randomKey(), project: 't' }).done;
      assert.equal(none.code, 1008);
      assert.match(none.messages[0].message, /needs a token/);
      const wrong = await upload(srv.ws, capB, { key: randomKey(), project: 't', token: `${token}x` }).done;
      assert.match(wrong.messages[0].message, /bad token/);
      const ok = await upload(srv.ws, capB, { key: randomKey(), project: 't', token }).done;
      assert.equal(ok.messages.at(-1).state, 'complete');
      const id = ok.messages.at(-1).id;
      assert.equal((await search(srv, 'project=t')).status, 401);
      assert.equal((await search(srv, 'project=t', { authorization: 'Bearer nope-nope-nope-nope' })).status, 401);
      assert.equal((await search(srv, `project=t&token=${token}`)).body.captures.length, 1);
      const del = (headers) => fetch(`${srv.http}/api/captures/${id}`, { method: 'DELETE', headers });
      assert.equal((await del({})).status, 401);
      assert.equal((await del({ authorization: 'Bearer wrong-token-wrong-token' })).status, 403);
      assert.equal((await del({ authorization: `Bearer ${token}` })).status, 200);
      assert.equal((await del({ authorization: `Bearer ${token}` })).status, 404);
      assert.equal((await search(srv, 'project=t', { authorization: `Bearer ${token}` })).body.captures.length, 0);
    });
  });

  test('--store beyond loopback without --token-file refuses to start', async () => {
    await assert.rejects(startServer(['--store', root, '--host', '0.0.0.0']), /needs --token-file/);
  });

  test('pages of other origins may upload only with --upload-origin', async () => {
    await withStore(['--upload-origin', 'https://app.example.com'], async (srv) => {
      const foreign = await upload(srv.ws, capB, { key: randomKey(), project: 'o' }, { origin: 'https://evil.example' }).done;
      assert.equal(foreign.messages.at(-1)?.type, 'error', 'refused in the websocket, with the reason');
      assert.match(foreign.messages.at(-1).message, /uploads from pages of this origin .*--upload-origin/);
      assert.equal(foreign.code, 1008);
      const allowed = await upload(srv.ws, capB, { key: randomKey(), project: 'o' }, { origin: 'https://app.example.com' }).done;
      assert.equal(allowed.messages.at(-1).state, 'complete');
      // ... but not read.
      const v = viewer(`${srv.ws}/capture/${allowed.messages.at(-1).id}`, { origin: 'https://app.example.com' });
      assert.equal(await v.opened, false);
    });
  });
});
