// server_ws.test.mjs - capture streams over websockets: fidelity, growth, fan-out, stalls,
// garbage input, who may connect (Origin/Host), FIFOs, the viewer cap, stalled viewers, TCP
// keepalive, truncation/replacement (also a new run rewriting the file in place), and stopping.
//
// Run: node tests/server/server_ws.test.mjs build/native/bin/test_server_host
// Captures are synthetic: the 8-byte magic then random bytes (the server never parses records),
// so "byte-identical to the file" is a strong check. Timing assertions compare runs against a
// baseline measured in the same process instead of hard-coding speeds; absolute latency bounds
// are loose (and times SLOW, see server_harness.mjs) wherever the latency is not the point.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  MAGIC, SLOW, captureBytes, captureId, captureWithHeader, drainUntilEnd, listCaptures, makeTmp, rawUpgrade, sleep, stalledViewer,
  startServer, viewer, withTimeout,
} from './server_harness.mjs';

const root = makeTmp('ws');
const caps = path.join(root, 'caps');
let srv;

before(async () => {
  fs.mkdirSync(caps);
  srv = await startServer(['--site', root, caps]);
});

after(async () => {
  if (srv) {
    const r = await srv.stop();
    assert.equal(r.code, 0, `server exit: ${r.code} ${r.signal}\n${r.stderr}`);
  }
  fs.rmSync(root, { recursive: true, force: true });
});

function writeCapture(name, content) {
  const p = path.join(caps, name);
  fs.writeFileSync(p, content);
  return p;
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

function follow(v, value) {
  v.ws.send(JSON.stringify({ type: 'follow', value }));
}

describe('streaming a finished file', () => {
  test('?follow=0: the exact bytes of the file, then {"type":"end","bytes":N} and close 1000', async () => {
    const content = captureBytes(300 * 1024 + 7); // several 64 KiB chunks, odd tail
    writeCapture('fixed.vor', content);
    const id = await captureId(srv, 'fixed.vor');
    const r = await withTimeout(viewer(`${srv.ws}/capture/${id}?follow=0`).done, 10000, 'viewer');
    assert.equal(r.code, 1000);
    assert.ok(r.data.equals(content), `got ${r.data.length} bytes, file has ${content.length}`);
    assert.deepEqual(r.texts, [{ type: 'end', bytes: content.length }]);
  });

  test('clients that send no subprotocol are accepted', async () => {
    const content = captureBytes(1000);
    writeCapture('noproto.vor', content);
    const id = await captureId(srv, 'noproto.vor');
    const r = await withTimeout(viewer(`${srv.ws}/capture/${id}?follow=0`, { protocol: null }).done, 10000, 'viewer');
    assert.ok(r.data.equals(content));
    assert.equal(r.texts.at(-1).type, 'end');
  });

  test('--no-follow on the server ends streams at the current end without ?follow=0', async () => {
    const dir = makeTmp('nofollow');
    const content = captureBytes(5000);
    fs.writeFileSync(path.join(dir, 'x.vor'), content);
    const s = await startServer(['--no-follow', dir]);
    try {
      const id = await captureId(s, 'x.vor');
      const v = viewer(`${s.ws}/capture/${id}`);
      await v.opened;
      follow(v, true); // cannot override the server flag
      const r = await withTimeout(v.done, 10000, 'viewer');
      assert.ok(r.data.equals(content));
      assert.deepEqual(r.texts, [{ type: 'end', bytes: content.length }]);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('following a growing capture', () => {
  /**
   * Writer appends random-sized pieces for `ms`; `n` viewers follow from before the first append;
   * optional stalled viewers connect too. Returns what each viewer got plus the file content.
   */
  async function growingRun(name, { n, ms, stalled = 0 }) {
    const file = writeCapture(name, captureBytes(100));
    const id = await captureId(srv, name);
    const stalls = [];
    for (let i = 0; i < stalled; i++) stalls.push(await stalledViewer(srv.port, `/capture/${id}`));
    const viewers = Array.from({ length: n }, () => viewer(`${srv.ws}/capture/${id}`));
    assert.ok((await Promise.all(viewers.map((v) => v.opened))).every(Boolean), 'all viewers connected');
    const fd = fs.openSync(file, 'a');
    const t0 = performance.now();
    let pieces = 0;
    while (performance.now() - t0 < ms) {
      fs.writeSync(fd, crypto.randomBytes(1 + crypto.randomInt(20000)));
      pieces++;
      if (pieces % 4 === 0) await sleep(2);
    }
    fs.closeSync(fd);
    const liveBytes = viewers.map((v) => v.bytes()); // received while the writer was still writing
    const size = fs.statSync(file).size;
    const tEnd = performance.now();
    for (const v of viewers) follow(v, false);
    const results = await withTimeout(Promise.all(viewers.map((v) => v.done)), 60000, 'viewers to finish');
    const drainMs = performance.now() - tEnd;
    for (const s of stalls) s.destroy();
    return { content: fs.readFileSync(file), size, results, liveBytes, pieces, drainMs };
  }

  test('20 concurrent viewers each receive every byte, identical to the file, while it grows', async () => {
    const { content, size, results, liveBytes, pieces } = await growingRun('grow20.vor', { n: 20, ms: 1500 });
    assert.ok(pieces > 50 && size > 500 * 1024, `writer wrote ${pieces} pieces, ${size} bytes`);
    results.forEach((r, i) => {
      assert.equal(r.code, 1000, `viewer ${i}: close ${r.code} ${r.reason}`);
      assert.equal(r.data.length, size, `viewer ${i}: ${r.data.length} of ${size} bytes`);
      assert.ok(r.data.equals(content), `viewer ${i}: bytes differ from the file`);
      assert.deepEqual(r.texts, [{ type: 'end', bytes: size }], `viewer ${i}`);
      assert.ok(liveBytes[i] > 100, `viewer ${i} got nothing while the file grew (live streaming)`);
    });
  });

  test('with 2 stalled viewers connected, 20 others still get everything', async () => {
    const { content, size, results } = await growingRun('grow20s.vor', { n: 20, ms: 1000, stalled: 2 });
    results.forEach((r, i) => {
      assert.equal(r.code, 1000, `viewer ${i}`);
      assert.ok(r.data.equals(content), `viewer ${i}: ${r.data.length} of ${size} bytes`);
    });
  });

  test('a capture that is still empty is waited for, then streamed from its first byte', async () => {
    const file = writeCapture('late.vor', Buffer.alloc(0));
    const entry = (await listCaptures(srv)).find((c) => c.name === 'late.vor');
    assert.equal(entry.state, 'empty');
    const v = viewer(`${srv.ws}/capture/${entry.id}`);
    await v.opened;
    fs.appendFileSync(file, MAGIC.subarray(0, 5)); // a partial magic: still nothing sent
    await sleep(200);
    assert.equal(v.bytes(), 0);
    const rest = Buffer.concat([MAGIC.subarray(5), crypto.randomBytes(70000)]);
    fs.appendFileSync(file, rest);
    await withTimeout((async () => { while (v.bytes() < 70008) await sleep(10); })(), 10000, 'growth');
    follow(v, false);
    const r = await v.done;
    assert.ok(r.data.equals(fs.readFileSync(file)));
    assert.deepEqual(r.texts, [{ type: 'end', bytes: 70008 }]);
  });

  test('growth is picked up within a few poll periods', async () => {
    const file = writeCapture('latency.vor', captureBytes(10));
    const id = await captureId(srv, 'latency.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await v.opened;
    let expected = 18;
    await withTimeout((async () => { while (v.bytes() < expected) await sleep(5); })(), 5000, 'initial bytes');
    // Three appends, judged by the fastest: a server that does not poll (or polls rarely) is slow
    // every time, while a preempted test process or server only delays one of them.
    const times = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      fs.appendFileSync(file, Buffer.from('more'));
      expected += 4;
      await withTimeout((async () => { while (v.bytes() < expected) await sleep(2); })(), 5000, 'appended bytes');
      times.push(performance.now() - t0);
      await sleep(100); // parked at the end again
    }
    v.ws.close();
    // The poll period is 50 ms; 1 s is 20 of them.
    assert.ok(Math.min(...times) < 1000 * SLOW, `appended bytes took ${times.map((t) => t.toFixed(0))} ms to arrive`);
  });
});

describe('a stalled viewer does not delay the others', () => {
  test('8 viewers of a 24 MiB capture finish about as fast with a stalled viewer as without', async () => {
    // 24 MiB is well above what loopback socket buffers absorb, so a server that ever blocked
    // on the stalled socket, or served viewers in lock-step, would stall or slow the others.
    const content = captureBytes(24 * 1024 * 1024);
    writeCapture('big.vor', content);
    const id = await captureId(srv, 'big.vor');
    const url = `${srv.ws}/capture/${id}?follow=0`;
    async function run() {
      const t0 = performance.now();
      const rs = await withTimeout(Promise.all(Array.from({ length: 8 }, () => viewer(url).done)), 120000, 'viewers');
      for (const r of rs) assert.ok(r.data.equals(content), `${r.data.length} bytes of ${content.length}`);
      return performance.now() - t0;
    }
    await run(); // warm-up (page cache, JIT)
    const baseline = await run();
    const rssBefore = rssBytes(srv.child.pid);
    const stalled = await stalledViewer(srv.port, `/capture/${id}?follow=0`);
    await sleep(300); // let the server fill the stalled socket's buffers
    // Memory stays bounded: the stalled viewer costs at most about one chunk, not the file.
    const rssGrowth = rssBytes(srv.child.pid) - rssBefore;
    // A server that blocked on the stalled socket would never finish (the 120 s timeout); one
    // that served viewers in lock-step would be slower every time. A noisy machine slows a single
    // run, so a run over the bound is retried once and the faster run counts.
    const bound = baseline * 3 + 1500 * SLOW;
    let withStall = await run();
    if (withStall >= bound) {
      console.log(`# ${withStall.toFixed(0)} ms with a stalled viewer (bound ${bound.toFixed(0)} ms): running again`);
      withStall = Math.min(withStall, await run());
    }
    // The server keeps answering HTTP while the stalled viewer sits there.
    const t0 = performance.now();
    const listing = await withTimeout(fetch(`${srv.http}/api/captures`), 30000, 'the listing with a stalled viewer');
    assert.equal(listing.status, 200);
    const apiMs = performance.now() - t0;
    assert.ok(!stalled.destroyed, 'the stalled viewer was dropped (policy: it is kept)');
    stalled.destroy();
    console.log(`# 8 viewers x 24 MiB: ${baseline.toFixed(0)} ms alone, ${withStall.toFixed(0)} ms with a stalled viewer`);
    assert.ok(withStall < bound, `with a stalled viewer ${withStall} ms vs ${baseline} ms without`);
    // Not a latency test: it must answer, in well under the seconds a blocked loop would take.
    assert.ok(apiMs < 3000 * SLOW, `listing took ${apiMs} ms with a stalled viewer`);
    assert.ok(rssGrowth < 8 * 1024 * 1024, `server RSS grew by ${rssGrowth} bytes for one stalled viewer`);
  });
});

describe('garbage from clients', () => {
  let id;
  let content;
  before(async () => {
    content = captureBytes(2000);
    writeCapture('target.vor', content);
    id = await captureId(srv, 'target.vor');
  });

  async function expectError(send, code, pattern) {
    const v = viewer(`${srv.ws}/capture/${id}`);
    assert.ok(await v.opened);
    send(v.ws);
    const r = await withTimeout(v.done, 10000, 'close after garbage');
    assert.equal(r.code, code, `close ${r.code} ${r.reason}`);
    const err = r.texts.find((t) => t.type === 'error');
    assert.ok(err, `no error message; got ${JSON.stringify(r.texts)}`);
    assert.match(err.message, pattern);
    return r;
  }

  test('binary junk -> error, close 1003', () =>
    expectError((ws) => ws.send(crypto.randomBytes(100)), 1003, /binary/));
  test('invalid JSON -> error, close 1008', () =>
    expectError((ws) => ws.send('{"type": "follow", value: false}'), 1008, /not valid JSON/));
  test('truncated JSON -> error, close 1008', () =>
    expectError((ws) => ws.send('{"type":"follow","value":'), 1008, /not valid JSON/));
  test('JSON that is not an object -> error, close 1008', () =>
    expectError((ws) => ws.send('[1,2,3]'), 1008, /object/));
  test('unknown type -> error, close 1008', () =>
    expectError((ws) => ws.send('{"type":"rm -rf"}'), 1008, /unknown message type/));
  test('missing type -> error, close 1008', () =>
    expectError((ws) => ws.send('{"value":true}'), 1008, /type/));
  test('bad follow value -> error, close 1008', () =>
    expectError((ws) => ws.send('{"type":"follow","value":"yes"}'), 1008, /true or false/));
  test('deeply nested JSON -> error, close 1008', () =>
    expectError((ws) => ws.send('['.repeat(100) + ']'.repeat(100)), 1008, /not valid JSON/));
  test('a 1 MiB message -> error, close 1009', () =>
    expectError((ws) => ws.send('x'.repeat(1 << 20)), 1009, /too large/));
  test('a message fragmented into many frames, over the limit -> close 1009', () =>
    expectError((ws) => {
      for (let i = 0; i < 10; i++) ws.send('{"a":"' + 'y'.repeat(1000), { fin: false });
      ws.send('"}', { fin: true });
    }, 1009, /too large/));

  test('a valid message fragmented over several frames is understood', async () => {
    const v = viewer(`${srv.ws}/capture/${id}`);
    await v.opened;
    await withTimeout((async () => { while (v.bytes() < content.length) await sleep(5); })(), 5000, 'bytes');
    v.ws.send('{"type":', { fin: false });
    v.ws.send('"follow","value"', { fin: false });
    v.ws.send(':false}', { fin: true });
    const r = await withTimeout(v.done, 5000, 'end');
    assert.deepEqual(r.texts, [{ type: 'end', bytes: content.length }]);
  });

  test('invalid UTF-8 in a text message -> close 1007', async () => {
    const v = viewer(`${srv.ws}/capture/${id}`);
    await v.opened;
    v.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    const r = await withTimeout(v.done, 10000, 'close');
    assert.equal(r.code, 1007);
  });

  for (const [url, pattern] of [
    ['/capture/abc', /unknown capture id/],
    ['/capture/', /bad URL/],
    ['/capture/01', /unknown capture id/],
    ['/capture/0/extra', /unknown capture id/],
    ['/capture/99999', /unknown capture id/],
    ['/elsewhere', /bad URL/],
    ['/', /bad URL/],
  ]) {
    test(`bad URL ${url} -> error, close 1008`, async () => {
      const r = await withTimeout(viewer(`${srv.ws}${url}`).done, 10000, url);
      assert.equal(r.code, 1008, `${url}: ${r.code} ${r.reason}`);
      assert.match(r.texts[0]?.message ?? '', pattern);
      assert.equal(r.data.length, 0);
    });
  }

  test('bad ?follow value -> error, close 1008', async () => {
    const r = await viewer(`${srv.ws}/capture/${id}?follow=maybe`).done;
    assert.equal(r.code, 1008);
    assert.match(r.texts[0].message, /follow/);
  });

  test('a file that is not a capture is refused, not served', async () => {
    writeCapture('fake.vor', Buffer.from('GIF89a not a capture'));
    const fake = await captureId(srv, 'fake.vor');
    const r = await viewer(`${srv.ws}/capture/${fake}`).done;
    assert.equal(r.code, 1008);
    assert.match(r.texts[0].message, /not a vor capture/);
    assert.equal(r.data.length, 0);
  });

  test('an unknown subprotocol and raw TCP garbage are dropped', async () => {
    for (const protocol of ['something-else', 'http']) {
      const v = viewer(`${srv.ws}/capture/${id}`, { protocol });
      assert.equal(await v.opened, false, `subprotocol ${protocol} was accepted`);
      assert.notEqual((await v.done).code, 1000);
    }
    await new Promise((resolve) => {
      const s = net.connect(srv.port, '127.0.0.1', () => s.write(crypto.randomBytes(5000)));
      s.on('error', () => {});
      s.on('close', resolve);
      s.resume();
      setTimeout(() => { s.destroy(); resolve(); }, 5000);
    });
  });

  test('after all that, the server still streams to a well-behaved viewer', async () => {
    const r = await withTimeout(viewer(`${srv.ws}/capture/${id}?follow=0`).done, 10000, 'viewer');
    assert.ok(r.data.equals(content));
    assert.equal(r.code, 1000);
  });
});

describe('file changes under a follower', () => {
  test('truncation is reported as reset "truncated" and the stream ends', async () => {
    const file = writeCapture('trunc.vor', captureBytes(5000));
    const id = await captureId(srv, 'trunc.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await withTimeout((async () => { while (v.bytes() < 5008) await sleep(5); })(), 5000, 'bytes');
    fs.truncateSync(file, 100);
    const r = await withTimeout(v.done, 5000, 'reset');
    assert.deepEqual(r.texts, [{ type: 'reset', reason: 'truncated', bytes: 5008 }]);
    assert.equal(r.code, 1000);
  });

  test('a file replaced by rename is reported as reset "replaced"', async () => {
    const file = writeCapture('repl.vor', captureBytes(100));
    const id = await captureId(srv, 'repl.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await withTimeout((async () => { while (v.bytes() < 108) await sleep(5); })(), 5000, 'bytes');
    fs.writeFileSync(`${file}.tmp`, captureBytes(50));
    fs.renameSync(`${file}.tmp`, file);
    const r = await withTimeout(v.done, 5000, 'reset');
    assert.deepEqual(r.texts, [{ type: 'reset', reason: 'replaced', bytes: 108 }]);
  });

  test('a deleted file is reported as reset "removed"', async () => {
    const file = writeCapture('gone.vor', captureBytes(100));
    const id = await captureId(srv, 'gone.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await withTimeout((async () => { while (v.bytes() < 108) await sleep(5); })(), 5000, 'bytes');
    fs.rmSync(file);
    const r = await withTimeout(v.done, 5000, 'reset');
    assert.deepEqual(r.texts, [{ type: 'reset', reason: 'removed', bytes: 108 }]);
  });
});

describe('who may connect: Origin and Host on the upgrade', () => {
  let id;
  let content;
  before(async () => {
    content = captureBytes(3000);
    writeCapture('origin.vor', content);
    id = await captureId(srv, 'origin.vor');
  });

  test('a page from another site cannot read captures: 403 before the upgrade', async () => {
    for (const origin of ['https://evil.example', `http://evil.example:${srv.port}`, 'null',
      `http://localhost:${srv.port + 1}`, 'http://localhost', `http://127.0.0.1:${srv.port}.evil.example`]) {
      const v = viewer(`${srv.ws}/capture/${id}?follow=0`, { origin });
      assert.equal(await v.opened, false, `Origin ${origin} was accepted`);
      const r = await withTimeout(v.done, 5000, origin);
      assert.match(r.error ?? '', /403/, `Origin ${origin}: ${r.error}`);
      assert.equal(r.data.length, 0);
    }
    // ids are sequential: the first capture of a default `vor serve` is /capture/0
    const r = await rawUpgrade(srv.port, '/capture/0', `Host: 127.0.0.1:${srv.port}\r\nOrigin: https://evil.example\r\n`);
    assert.equal(r.status, 403);
    assert.match(r.body, /cross-origin/);
  });

  test('DNS rebinding (foreign Host, matching Origin) is refused too', async () => {
    const host = `attacker.example:${srv.port}`;
    const r = await rawUpgrade(srv.port, `/capture/${id}`, `Host: ${host}\r\nOrigin: http://${host}\r\n`);
    assert.equal(r.status, 403);
    assert.match(r.body, /Host/);
    const noOrigin = await rawUpgrade(srv.port, `/capture/${id}`, `Host: ${host}\r\n`);
    assert.equal(noOrigin.status, 403);
  });

  test('the panel served by this server (any loopback name, or a tunnel) and non-browser clients pass', async () => {
    for (const origin of [`http://127.0.0.1:${srv.port}`, `http://localhost:${srv.port}`, `http://[::1]:${srv.port}`, undefined]) {
      const r = await withTimeout(viewer(`${srv.ws}/capture/${id}?follow=0`, { origin }).done, 5000, String(origin));
      assert.equal(r.code, 1000, `Origin ${origin}: ${r.code} ${r.reason} ${r.error}`);
      assert.ok(r.data.equals(content));
    }
    const tunnel = await rawUpgrade(srv.port, `/capture/${id}`, 'Host: localhost:9000\r\nOrigin: http://localhost:9000\r\n');
    assert.equal(tunnel.status, 101, tunnel.head);
  });

  test('an upgrade on a keep-alive connection after a plain request is checked as well', async () => {
    const r = await new Promise((resolve) => {
      const sock = net.connect(srv.port, '127.0.0.1');
      let all = '';
      sock.on('data', (d) => {
        all += d.toString('latin1');
        if (/HTTP\/1\.1 (101|403)[^]*\r\n\r\n/.test(all.slice(all.indexOf('\r\n\r\n') + 4))) { sock.destroy(); resolve(all); }
      });
      sock.on('close', () => resolve(all));
      sock.write('GET /api/captures HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      setTimeout(() => sock.write(`GET /capture/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n` +
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
        'Sec-WebSocket-Version: 13\r\n\r\n'), 200);
      setTimeout(() => { sock.destroy(); resolve(all); }, 3000);
    });
    const statuses = [...r.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    assert.equal(statuses[0], '200');
    assert.ok(!statuses.includes('101'), `the cross-origin upgrade was accepted: ${statuses}`);
  });
});

describe('a FIFO where a capture was expected', () => {
  test('is refused with a close reason at once, and the server keeps serving', async () => {
    const dir = makeTmp('fifo');
    const fifo = path.join(dir, 'pipe.vor');
    const good = path.join(dir, 'good.vor');
    execFileSync('mkfifo', [fifo]);
    const content = captureBytes(1000);
    fs.writeFileSync(good, content);
    const s = await startServer([fifo, good]);
    try {
      const list = await listCaptures(s);
      const r = await withTimeout(viewer(`${s.ws}/capture/${list.find((c) => c.name === 'pipe.vor').id}`).done,
        3000, 'refusal of the FIFO');
      assert.equal(r.code, 1008);
      assert.match(r.reason, /not a regular file/);
      assert.match(r.texts[0].message, /pipe\.vor is not a regular file/);
      // A server stuck in open(2) on the FIFO would not answer at all (until `finally` unblocks it).
      const t0 = performance.now();
      const listing = await withTimeout(fetch(`${s.http}/api/captures`), 10000, 'the listing after the FIFO');
      assert.equal(listing.status, 200);
      const ms = performance.now() - t0;
      assert.ok(ms < 3000 * SLOW, `listing took ${ms.toFixed(0)} ms after the FIFO`);
      const ok = await withTimeout(viewer(`${s.ws}/capture/${list.find((c) => c.name === 'good.vor').id}?follow=0`).done,
        3000, 'the regular capture');
      assert.ok(ok.data.equals(content));
    } finally {
      // Unblocks a server stuck in open(2) on the FIFO (the bug this guards against).
      try { fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)); } catch { /* no reader */ }
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a new run rewriting the followed file in place', () => {
  test('truncated and rewritten longer before the next poll: reset "replaced", no byte of the new run', async () => {
    const dir = makeTmp('rewrite');
    const file = path.join(dir, 'run.vor');
    const first = captureWithHeader(5000, { pid: 100, wallNs: 1700000000000000000n });
    fs.writeFileSync(file, first);
    const s = await startServer([dir], { VOR_TEST_POLL_MS: '400' });
    try {
      const id = await captureId(s, 'run.vor');
      const v = viewer(`${s.ws}/capture/${id}`);
      await withTimeout((async () => { while (v.bytes() < first.length) await sleep(5); })(), 5000, 'first run');
      await sleep(50); // parked at the end, next poll up to 400 ms away
      const inodeBefore = fs.statSync(file).ino;
      fs.writeFileSync(file, captureWithHeader(50000, { pid: 101, wallNs: 1700000000500000000n })); // O_TRUNC + write
      assert.equal(fs.statSync(file).ino, inodeBefore, 'same inode: only the header tells the runs apart');
      const r = await withTimeout(v.done, 5000, 'reset');
      assert.ok(r.data.equals(first), `the viewer got ${r.data.length} bytes, the first run has ${first.length}`);
      assert.deepEqual(r.texts, [{ type: 'reset', reason: 'replaced', bytes: first.length }]);
      assert.equal(r.code, 1000);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('rewritten while a viewer is still reading the old run: it gets a prefix of the old run, then a reset', async () => {
    const dir = makeTmp('rewrite2');
    const file = path.join(dir, 'run.vor');
    const first = captureWithHeader(24 * 1024 * 1024, { pid: 200 });
    fs.writeFileSync(file, first);
    const s = await startServer([dir]);
    try {
      const id = await captureId(s, 'run.vor');
      const v = viewer(`${s.ws}/capture/${id}`);
      await withTimeout((async () => { while (v.bytes() < 1024 * 1024) await sleep(1); })(), 5000, 'first MiB');
      v.ws._socket.pause(); // stop reading: the server is mid-file
      await sleep(100);
      fs.writeFileSync(file, captureWithHeader(32 * 1024 * 1024, { pid: 201 }));
      v.ws._socket.resume();
      const r = await withTimeout(v.done, 20000, 'reset');
      // Usually mid-file; if socket buffers absorbed the whole old run first, this is the
      // at-the-end case instead: either way only old-run bytes, then the reset.
      if (r.data.length === first.length) console.log('# the old run was already all sent before the rewrite');
      assert.ok(r.data.equals(first.subarray(0, r.data.length)), 'bytes of the new run were sent on the old stream');
      assert.equal(r.texts.length, 1);
      assert.equal(r.texts[0].type, 'reset');
      assert.ok(['replaced', 'truncated'].includes(r.texts[0].reason), r.texts[0].reason);
      assert.equal(r.texts[0].bytes, r.data.length);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a real capture that keeps growing is followed to the end without a false reset', async () => {
    const file = writeCapture('grow-header.vor', captureWithHeader(100, { pid: 300 }));
    const id = await captureId(srv, 'grow-header.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await v.opened;
    for (let i = 0; i < 30; i++) {
      fs.appendFileSync(file, crypto.randomBytes(1 + crypto.randomInt(100000)));
      await sleep(10);
    }
    const size = fs.statSync(file).size;
    await withTimeout((async () => { while (v.bytes() < size) await sleep(5); })(), 10000, 'growth');
    follow(v, false);
    const r = await v.done;
    assert.deepEqual(r.texts, [{ type: 'end', bytes: size }]);
    assert.ok(r.data.equals(fs.readFileSync(file)));
  });
});

describe('stalled viewers give their slot back', () => {
  test('a viewer that takes nothing is closed after the stall timeout, its slot free at once', async () => {
    const dir = makeTmp('stall');
    fs.writeFileSync(path.join(dir, 'big.vor'), captureBytes(16 * 1024 * 1024));
    const s = await startServer([dir], { VOR_TEST_MAX_VIEWERS: '1', VOR_TEST_STALL_MS: '500' });
    try {
      const id = await captureId(s, 'big.vor');
      const stalled = await stalledViewer(s.port, `/capture/${id}`);
      await sleep(1500); // stalled after 0.5 s: closed with 1008, which it cannot take yet
      // Its slot is free already: a viewer gets the whole file (server_hostile.test.mjs covers
      // a newcomer that arrives while the stalled viewer still holds it).
      const next = await withTimeout(viewer(`${s.ws}/capture/${id}?follow=0`).done, 30000, 'a viewer');
      assert.equal(next.code, 1000, `${next.code} ${next.reason}`);
      assert.equal(next.data.length, 16 * 1024 * 1024 + 8);
      // Reading again, the stalled viewer finds the rest of what was sent, the close frame, and
      // the end of the connection (SERVER_ERROR_CLOSE_TIMEOUT_S, 5 s, after the close).
      const all = await drainUntilEnd(stalled, 10000, 'the server to end the stalled connection');
      assert.ok(all.length < 16 * 1024 * 1024, 'it was not sent the whole capture');
      assert.ok(all.includes(Buffer.from('viewer stalled: took no data for 500 ms')), 'close reason');
      stalled.destroy();
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a follower waiting at the end of a quiet capture is not "stalled"', async () => {
    const dir = makeTmp('quiet');
    const file = path.join(dir, 'q.vor');
    fs.writeFileSync(file, captureBytes(100));
    const s = await startServer([dir], { VOR_TEST_STALL_MS: '300' });
    try {
      const id = await captureId(s, 'q.vor');
      const v = viewer(`${s.ws}/capture/${id}`);
      await withTimeout((async () => { while (v.bytes() < 108) await sleep(5); })(), 5000, 'bytes');
      await sleep(1200); // four stall periods with nothing to send
      fs.appendFileSync(file, Buffer.from('later'));
      await withTimeout((async () => { while (v.bytes() < 113) await sleep(5); })(), 5000, 'appended bytes');
      follow(v, false);
      const r = await v.done;
      assert.deepEqual(r.texts, [{ type: 'end', bytes: 113 }]);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the server\'s sockets use TCP keepalive (vanished peers are noticed)', async (t) => {
    let ss;
    try { ss = execFileSync('ss', ['-V']); } catch { /* not installed */ }
    if (!ss) return t.skip('ss (iproute2) not available');
    const id = await captureId(srv, 'origin.vor');
    const v = viewer(`${srv.ws}/capture/${id}`);
    await v.opened;
    await sleep(100);
    const out = execFileSync('ss', ['-tnoH', 'state', 'established', `( sport = :${srv.port} )`]).toString();
    v.ws.close();
    assert.match(out, /timer:\(keepalive,/, out);
  });
});

describe('limits and stopping', () => {
  test('beyond the viewer cap a connection is refused with 1013, and a freed slot is reusable', async () => {
    const dir = makeTmp('cap');
    fs.writeFileSync(path.join(dir, 'c.vor'), captureBytes(100));
    const s = await startServer([dir], { VOR_TEST_MAX_VIEWERS: '3', VOR_TEST_MAX_VIEWERS_PER_ADDRESS: '3' });
    try {
      const id = await captureId(s, 'c.vor');
      const held = [0, 1, 2].map(() => viewer(`${s.ws}/capture/${id}`));
      await Promise.all(held.map((v) => v.opened));
      await withTimeout((async () => { while (held.some((v) => v.bytes() < 108)) await sleep(5); })(), 5000, 'held');
      const extra = await withTimeout(viewer(`${s.ws}/capture/${id}`).done, 5000, 'refusal');
      assert.equal(extra.code, 1013);
      assert.match(extra.texts[0].message, /too many viewers \(max 3\)/);
      held[0].ws.close();
      await held[0].done;
      await sleep(100);
      const again = await withTimeout(viewer(`${s.ws}/capture/${id}?follow=0`).done, 5000, 'reuse');
      assert.equal(again.code, 1000);
      assert.equal(again.data.length, 108);
      for (const v of held.slice(1)) v.ws.close();
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('stop: followers get 1001, a stalled viewer does not hold the stop up, exit 0', async () => {
    const dir = makeTmp('stop');
    fs.writeFileSync(path.join(dir, 's.vor'), captureBytes(20 * 1024 * 1024));
    const s = await startServer([dir]);
    let r;
    let closes;
    try {
      const id = await captureId(s, 's.vor');
      const stalled = await stalledViewer(s.port, `/capture/${id}`);
      const followers = [0, 1, 2].map(() => viewer(`${s.ws}/capture/${id}`));
      await withTimeout((async () => { while (followers.some((v) => v.bytes() < 20 * 1024 * 1024)) await sleep(10); })(),
        60000, 'followers to catch up');
      r = await s.stop();
      closes = await withTimeout(Promise.all(followers.map((v) => v.done)), 5000, 'closes');
      stalled.destroy();
    } finally {
      if (!r) await s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(r.code, 0, r.stderr);
    // Stopping waits SERVER_STOP_GRACE_MS (1 s) for viewers to take their close; a stop held up
    // by the stalled viewer for good is SIGKILLed by s.stop() (code null, failing above).
    assert.ok(r.ms < 5000 * SLOW, `stop took ${r.ms} ms`);
    for (const c of closes) {
      assert.equal(c.code, 1001);
      assert.equal(c.reason, 'server stopping');
    }
  });
});
