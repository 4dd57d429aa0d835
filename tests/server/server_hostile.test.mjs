// server_hostile.test.mjs - `vor serve` under hostile load: slow and idle connections, running out
// of file descriptors, viewers that never read, HTTP/2 cleartext, websocket frames that break
// RFC 6455.
//
// Run: node tests/server/server_hostile.test.mjs build/native/bin/test_server_host
// Every client is on loopback; a client's own address (127.0.0.2, 127.0.0.3, ...) stands for
// another machine, and the "normal" client always comes from the same address as the attack
// where the attack is from one address, so per-address limits alone cannot be what lets it in.
// Counts and durations are bounded (at most 1,000 connections, a few seconds each). Latency
// bounds are what the server promises (docs/PERFORMANCE.md has the measured figures), far from
// what a starved server shows (seconds), and times SLOW in sanitizer builds.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  SLOW, captureBytes, captureId, cpuSeconds, drainUntilEnd, firstBytesMs, get, makeTmp, openFileLimit, rawHttp, rawWebSocket, sleep, stalledViewer,
  startServer, viewer, withTimeout, wsFrame,
} from './server_harness.mjs';
import { SlowClients, startSlowProcess } from './slow_clients.mjs';

const root = makeTmp('hostile');
const site = path.join(root, 'site');
const caps = path.join(root, 'caps');

before(() => {
  fs.mkdirSync(site);
  fs.mkdirSync(caps);
  fs.writeFileSync(path.join(site, 'index.html'), '<!doctype html><title>vor</title>');
  fs.writeFileSync(path.join(caps, 'quiet.vor'), captureBytes(1000));
  fs.writeFileSync(path.join(caps, 'big.vor'), captureBytes(16 * 1024 * 1024));
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

async function withServer(env, fn, options = {}) {
  const s = await startServer(['--site', site, caps], env, options);
  try {
    return await fn(s);
  } finally {
    const r = await s.stop();
    assert.equal(r.code, 0, `server exit: ${r.code} ${r.signal}\n${r.stderr}`);
  }
}

/** Milliseconds to fetch `pathText` (status 200 required) from `localAddress`. */
async function timedGet(port, pathText, localAddress = '127.0.0.1') {
  const t0 = performance.now();
  const r = await get(port, pathText, '', { localAddress, timeoutMs: 10000 * SLOW });
  const ms = performance.now() - t0;
  assert.equal(r.status, 200, `GET ${pathText}: ${r.status} after ${ms.toFixed(0)} ms`);
  return ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('slow and idle connections do not starve normal clients', () => {
  test('1,000 slow or idle connections: a client from the same address as 500 of them is served within 100 ms', async (t) => {
    if (openFileLimit() < 1200) return t.skip(`needs 1,200 descriptors per process, has ${openFileLimit()}`);
    await withServer({}, async (s) => {
      // 500 from the normal client's own address, 50 from each of 10 others: beyond both the
      // per-address and the overall quota of unfinished connections. Closed ones come back.
      const groups = ['500@127.0.0.1'];
      for (let k = 0; k < 10; k++) groups.push(`50@127.0.0.${20 + k}`);
      const slow = await startSlowProcess(s.port, groups); // its own event loop: never delays ours
      let stats = null;
      try {
        const times = [];
        for (let i = 0; i < 20; i++) { // over 2 s: through several waves of reconnections
          const ms = await timedGet(s.port, i % 2 ? '/api/captures' : '/');
          times.push(ms);
          assert.ok(ms < 1000 * SLOW, `request ${i} took ${ms.toFixed(0)} ms under 1,000 slow connections`);
          await sleep(100);
        }
        stats = await slow.stop();
        const m = median(times);
        console.log(`# 20 requests under 1,000 slow connections: median ${m.toFixed(1)} ms, ` +
          `max ${Math.max(...times).toFixed(1)} ms; slow connections: ${stats.connects} made, ` +
          `${stats.closedByServer} closed by the server, ${stats.open} open at the end`);
        assert.ok(m <= 100 * SLOW, `median ${m.toFixed(0)} ms`);
      } finally {
        if (!stats) await slow.stop();
      }
    });
  });

  test('an address over its quota of unfinished connections loses its oldest ones at once, others keep theirs', async () => {
    await withServer({}, async (s) => {
      const a = new SlowClients(s.port, 40, { localAddress: '127.0.0.5', reconnectMs: null });
      const b = new SlowClients(s.port, 10, { localAddress: '127.0.0.6', reconnectMs: null });
      try {
        await a.start();
        await b.start();
        // 32 unfinished connections per address: the 8 oldest of 127.0.0.5 are closed as the
        // newer ones arrive, long before the 3 s header timeout would close anything.
        await withTimeout((async () => { while (a.closedByServer < 8) await sleep(10); })(), 1500,
          `8 of 40 closed (${a.closedByServer} so far)`);
        await sleep(100);
        assert.equal(a.closedByServer, 8);
        assert.equal(b.closedByServer, 0);
        // A client from the same address completes its request and is served.
        await timedGet(s.port, '/api/captures', '127.0.0.5');
      } finally {
        a.stop();
        b.stop();
      }
    });
  });

  test('out of file descriptors (ulimit -n 128, 300 idle connections): no busy loop, normal clients served', async () => {
    await withServer({}, async (s) => {
      const idle = [];
      for (let k = 0; k < 10; k++) idle.push(new SlowClients(s.port, 30, { localAddress: `127.0.0.${10 + k}`, reconnectMs: null }));
      try {
        await Promise.all(idle.map((c) => c.start()));
        await sleep(300);
        const cpu0 = cpuSeconds(s.child.pid);
        const t0 = performance.now();
        const ms = await timedGet(s.port, '/api/captures');
        await sleep(Math.max(0, 2000 - (performance.now() - t0)));
        const share = (cpuSeconds(s.child.pid) - cpu0) / ((performance.now() - t0) / 1000);
        const closed = idle.reduce((n, c) => n + c.closedByServer, 0);
        console.log(`# out of descriptors: server CPU ${(share * 100).toFixed(1)}% over 2 s; normal request ` +
          `${ms.toFixed(1)} ms; ${closed} of 300 idle connections closed by the server`);
        assert.ok(share < 0.1, `the server used ${(share * 100).toFixed(0)}% of a CPU while out of descriptors`);
        assert.ok(ms < 1000 * SLOW, `normal request took ${ms.toFixed(0)} ms`);
      } finally {
        for (const c of idle) c.stop();
      }
    }, { nofile: 128 });
  });
});

describe('viewer slots', () => {
  const firstByteMs = (s, id, localAddress) => firstBytesMs(`${s.ws}/capture/${id}`, { localAddress });

  /** 64 viewers that never read, from 127.0.0.2 and 127.0.0.3 (32 each, their whole quota). */
  const stall64 = async (s, id) => {
    const stalls = [];
    for (let i = 0; i < 64; i++) stalls.push(await stalledViewer(s.port, `/capture/${id}`, { localAddress: `127.0.0.${2 + (i % 2)}` }));
    return stalls;
  };

  test('64 viewers that never read hold every slot: a new viewer gets in within a second', async () => {
    await withServer({}, async (s) => {
      const id = await captureId(s, 'big.vor');
      const stalls = await stall64(s, id);
      try {
        // From an address that holds its whole quota, and from a new one.
        const same = await firstByteMs(s, id, '127.0.0.2');
        const other = await firstByteMs(s, id, '127.0.0.4');
        console.log(`# with 64 stalled viewers: a new viewer got bytes after ${same.toFixed(0)} ms (same address), ` +
          `${other.toFixed(0)} ms (another address)`);
        assert.ok(same < 1000 * SLOW && other < 1000 * SLOW, `${same} ms, ${other} ms`);
      } finally {
        for (const sock of stalls) sock.destroy();
      }
    });
  });

  test('viewers parked at the end of a quiet capture that never read are told apart from live ones', async () => {
    await withServer({}, async (s) => {
      const id = await captureId(s, 'quiet.vor');
      const stalls = await stall64(s, id);
      try {
        await sleep(200); // all 1,008 bytes sent to each: nothing is pending for any of them
        const ms = await firstByteMs(s, id, '127.0.0.2');
        console.log(`# with 64 parked viewers that never read: a new viewer got bytes after ${ms.toFixed(0)} ms`);
        assert.ok(ms < 1000 * SLOW, `${ms} ms`);
      } finally {
        for (const sock of stalls) sock.destroy();
      }
    });
  });

  test('per-address limit; viewers that read and wait at the end of a quiet capture keep their slots', async () => {
    await withServer({ VOR_TEST_MAX_VIEWERS: '4', VOR_TEST_MAX_VIEWERS_PER_ADDRESS: '2' }, async (s) => {
      const file = path.join(caps, 'quiet.vor');
      const id = await captureId(s, 'quiet.vor');
      const size = fs.statSync(file).size;
      const held = ['127.0.0.2', '127.0.0.2', '127.0.0.3'].map((a) => viewer(`${s.ws}/capture/${id}`, { localAddress: a }));
      try {
        await withTimeout((async () => { while (held.some((v) => v.bytes() < size)) await sleep(5); })(), 5000, 'held');
        const third = await withTimeout(viewer(`${s.ws}/capture/${id}`, { localAddress: '127.0.0.2' }).done, 5000, 'refusal');
        assert.equal(third.code, 1013, 'a third viewer from one address');
        assert.match(third.texts[0].message, /too many viewers from your address \(max 2\)/);
        held.push(viewer(`${s.ws}/capture/${id}`, { localAddress: '127.0.0.4' })); // the 4th slot: fine
        await withTimeout((async () => { while (held[3].bytes() < size) await sleep(5); })(), 5000, '4th');
        const fifth = await withTimeout(viewer(`${s.ws}/capture/${id}`, { localAddress: '127.0.0.5' }).done, 5000, 'refusal');
        assert.equal(fifth.code, 1013, 'all four slots are held by live viewers');
        assert.match(fifth.texts[0].message, /too many viewers \(max 4\)/);
        fs.appendFileSync(file, Buffer.from('more'));
        await withTimeout((async () => { while (held.some((v) => v.bytes() < size + 4)) await sleep(5); })(), 5000,
          'the live viewers kept following');
      } finally {
        for (const v of held) v.ws.close();
        await Promise.all(held.map((v) => v.done));
      }
    });
  });

  test('a parked viewer that stops reading is closed after the stall timeout, with no one else waiting', async () => {
    await withServer({ VOR_TEST_STALL_MS: '500' }, async (s) => {
      const id = await captureId(s, 'quiet.vor');
      const sock = await stalledViewer(s.port, `/capture/${id}`);
      await sleep(2500); // pinged after 250 ms, no answer for 500 ms: closed
      const all = await drainUntilEnd(sock, 8000);
      const at = all.indexOf(Buffer.from('viewer stalled'));
      assert.ok(at > 4 && all[at - 4] === 0x88, 'a close frame "viewer stalled"');
      assert.equal(all.readUInt16BE(at - 2), 1008);
      sock.destroy();
    });
  });
});

describe('HTTP/2 cleartext is refused', () => {
  test('an h2c upgrade is not switched to HTTP/2 (its streams would skip the Host check)', async () => {
    await withServer({}, async (s) => {
      const r = await rawHttp(s.port, 'GET /api/captures HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\n' +
        'Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n');
      assert.notEqual(r.status, 101, r.raw.toString('latin1'));
      assert.equal(r.status, 400);
      assert.match(r.body.toString(), /HTTP\/2/);
      // The server still serves plain requests.
      await timedGet(s.port, '/api/captures');
    });
  });

  test('the HTTP/2 connection preface (prior knowledge) gets no HTTP/2 answer', async () => {
    await withServer({}, async (s) => {
      const r = await rawHttp(s.port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + '\0\0\0\x04\0\0\0\0\0');
      // An HTTP/2 server would answer with a SETTINGS frame (type 4) right away.
      assert.ok(!(r.raw.length >= 9 && r.raw[3] === 4), `answer: ${r.raw.toString('hex')}`);
    });
  });
});

describe('websocket frames that break RFC 6455 are answered with close 1002', () => {
  const cases = [
    ['an unmasked text frame', () => wsFrame(1, '{"type":"follow","value":false}', { mask: false })],
    ['an unmasked ping', () => wsFrame(9, 'x', { mask: false })],
    ['a ping of 126 bytes', () => wsFrame(9, 'x'.repeat(126))],
    ['a ping with a 16-bit length', () => wsFrame(9, 'x', { len16: true })],
    ['a fragmented ping', () => wsFrame(9, 'x', { fin: false })],
    ['a reserved bit', () => wsFrame(1, '{}', { rsv: 4 })],
    ['a reserved opcode', () => wsFrame(3, 'x')],
    ['a continuation with nothing to continue', () => wsFrame(0, 'x')],
    ['a close frame with a 1-byte body', () => wsFrame(8, 'x')],
    ['a close frame with status 1005 (never sent)', () => wsFrame(8, Buffer.from([0x03, 0xed]))],
  ];
  for (const [what, frame] of cases) {
    test(what, async () => {
      await withServer({}, async (s) => {
        const id = await captureId(s, 'quiet.vor');
        const c = await rawWebSocket(s.port, `/capture/${id}`);
        c.send(frame());
        const r = await withTimeout(c.closed, 8000, 'the server to close');
        assert.equal(r.code, 1002, `close ${r.code} ${r.reason}`);
      });
    });
  }

  test('valid control frames work: a 125-byte ping is answered, a close is echoed', async () => {
    await withServer({}, async (s) => {
      const id = await captureId(s, 'quiet.vor');
      const c = await rawWebSocket(s.port, `/capture/${id}`);
      const payload = Buffer.alloc(125, 0x61);
      c.send(wsFrame(9, payload));
      await withTimeout((async () => { while (!c.frames.some((f) => f.opcode === 10)) await sleep(5); })(), 5000, 'pong');
      assert.ok(c.frames.find((f) => f.opcode === 10).payload.equals(payload));
      c.send(wsFrame(8, Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65])));
      const r = await withTimeout(c.closed, 5000, 'close');
      assert.equal(r.code, 1000);
      assert.equal(r.frames.filter((f) => f.opcode === 1 || f.opcode === 2 || f.opcode === 0).length > 0, true);
    });
  });
});
