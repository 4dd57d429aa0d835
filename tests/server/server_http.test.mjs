// server_http.test.mjs - the HTTP side of `vor serve`: static files, headers, traversal, listing,
// who may connect (Host header), HEAD on the API, over-long requests, idle connections, FIFOs,
// capture churn and the start-up warnings.
//
// Run: node tests/server/server_http.test.mjs build/native/bin/test_server_host
// One server for the whole file (site + capture dir in a temp directory); requests that must
// not be normalised by a client library go over raw TCP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MAGIC, SLOW, captureBytes, get, listCaptures, makeTmp, rawHttp, sleep, startServer } from './server_harness.mjs';

const root = makeTmp('http');
const site = path.join(root, 'site');
const caps = path.join(root, 'caps');
const SECRET = `secret-${process.pid}-${Date.now()}`;
const files = {
  'index.html': ['<!doctype html><title>vor</title>', 'text/html'],
  'app.js': ['export const a = 1;', 'text/javascript'],
  'mod.mjs': ['export default 2;', 'text/javascript'],
  'style.css': ['body{margin:0}', 'text/css'],
  'demo.wasm': [Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), 'application/wasm'],
  'data.json': ['{"x":1}', 'application/json'],
  'icon.svg': ['<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml'],
  'pic.png': [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'image/png'],
  'app.js.map': ['{"version":3}', 'application/json'],
  'blob.xyz': ['???', 'application/octet-stream'],
  'sub/index.html': ['<p>sub</p>', 'text/html'],
};
let srv;

before(async () => {
  fs.mkdirSync(path.join(site, 'sub'), { recursive: true });
  fs.mkdirSync(caps);
  for (const [name, [content]] of Object.entries(files)) fs.writeFileSync(path.join(site, name), content);
  fs.writeFileSync(path.join(root, 'secret.txt'), SECRET);
  fs.symlinkSync(path.join(root, 'secret.txt'), path.join(site, 'leak.txt'));
  fs.symlinkSync(root, path.join(site, 'leakdir'));
  fs.symlinkSync(path.join(site, 'app.js'), path.join(site, 'alias.js')); // a symlink inside: fine
  srv = await startServer(['--site', site, caps, path.join(root, 'single.vor'), '--host', '127.0.0.1']);
});

after(async () => {
  fs.rmSync(root, { recursive: true, force: true });
  if (srv) {
    const r = await srv.stop();
    assert.equal(r.code, 0, `server exit: ${r.code} ${r.signal}\n${r.stderr}`); // ASan/LSan reports fail here
  }
});

function assertIsolationHeaders(r, what) {
  assert.equal(r.headers['cross-origin-opener-policy'], 'same-origin', `${what}: COOP`);
  assert.equal(r.headers['cross-origin-embedder-policy'], 'require-corp', `${what}: COEP`);
  assert.equal(r.headers['cross-origin-resource-policy'], 'same-origin', `${what}: CORP`);
}

describe('static files', () => {
  test('each file is served whole with its MIME type and the COOP/COEP/CORP headers', async () => {
    for (const [name, [content, type]] of Object.entries(files)) {
      const r = await get(srv.port, `/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.headers['content-type'].split(';')[0], type, name);
      assert.deepEqual(r.body, Buffer.from(content), name);
      assertIsolationHeaders(r, name);
    }
  });

  test('.wasm is application/wasm exactly (streaming compilation needs it)', async () => {
    const r = await get(srv.port, '/demo.wasm');
    assert.equal(r.headers['content-type'], 'application/wasm');
  });

  test('/ serves index.html; a directory without its slash redirects; dir/ serves its index.html', async () => {
    const r = await get(srv.port, '/');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), files['index.html'][0]);
    const red = await get(srv.port, '/sub');
    assert.equal(red.status, 301);
    assert.equal(red.headers.location, '/sub/');
    assertIsolationHeaders(red, 'redirect');
    const sub = await get(srv.port, '/sub/');
    assert.equal(sub.body.toString(), '<p>sub</p>');
  });

  test('missing files are 404 and still carry the isolation headers', async () => {
    const r = await get(srv.port, '/nope.js');
    assert.equal(r.status, 404);
    assertIsolationHeaders(r, '404');
  });

  test('HEAD gives the headers without a body; other methods get 405', async () => {
    const h = await rawHttp(srv.port, 'HEAD /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.equal(h.status, 200);
    assert.equal(h.body.length, 0);
    const p = await rawHttp(srv.port, 'POST /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    assert.equal(p.status, 405);
  });

  test('keep-alive: several requests on one connection', async () => {
    const r = await rawHttp(srv.port,
      'GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /style.css HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    const text = r.raw.toString('latin1');
    assert.equal(text.match(/HTTP\/1\.1 200/g)?.length, 2, text);
    assert.ok(text.includes(files['app.js'][0]) && text.includes(files['style.css'][0]));
  });

  test('a symlink that stays inside the site is served', async () => {
    const r = await get(srv.port, '/alias.js');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), files['app.js'][0]);
  });
});

describe('path traversal', () => {
  const attempts = [
    '/../secret.txt',
    '/../../../../../../etc/passwd',
    '/%2e%2e/secret.txt',
    '/%2E%2E/secret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..%2fsecret.txt',
    '/..%2Fsecret.txt',
    '/.%2e/secret.txt',
    '/%2e./secret.txt',
    '/sub/../../secret.txt',
    '/sub/%2e%2e/%2e%2e/secret.txt',
    '//..//..//secret.txt',
    '/./../secret.txt',
    '/%252e%252e/secret.txt',
    '/..\\secret.txt',
    '/%5c..%5csecret.txt',
    '/sub/..;/..;/secret.txt',
    '/leak.txt',
    '/leakdir/secret.txt',
    `/${path.join(root, 'secret.txt')}`,
    `${path.join(root, 'secret.txt')}`,
    'http://127.0.0.1/../secret.txt',
    '/%00/../secret.txt',
    '/secret.txt%00.html',
  ];
  for (const attempt of attempts) {
    test(`refused: GET ${attempt}`, async () => {
      const r = await get(srv.port, attempt);
      assert.ok(!r.raw.includes(SECRET), `the secret leaked through ${attempt}`);
      assert.notEqual(r.status, 200, `${attempt} answered 200`);
      // lws itself drops some malformed requests (no status); when there is one it is a refusal.
      if (r.status !== null) assert.ok([400, 403, 404].includes(r.status), `${attempt}: HTTP ${r.status}`);
    });
  }

  test('symlinks leading out of the site are 403 (not merely missing)', async () => {
    assert.equal((await get(srv.port, '/leak.txt')).status, 403);
    assert.equal((await get(srv.port, '/leakdir/secret.txt')).status, 403);
  });

  test('the server still serves after the attempts', async () => {
    assert.equal((await get(srv.port, '/app.js')).status, 200);
  });
});

describe('capture listing', () => {
  test('lists FILE arguments and the *.vor files directly inside DIR arguments, with states', async () => {
    fs.writeFileSync(path.join(caps, 'a.vor'), captureBytes(1000));
    fs.writeFileSync(path.join(caps, 'b.vor'), Buffer.from('not a capture at all'));
    fs.writeFileSync(path.join(caps, 'c.vor'), Buffer.alloc(0));
    fs.writeFileSync(path.join(caps, 'd.vor'), MAGIC.subarray(0, 3)); // being written
    fs.writeFileSync(path.join(caps, 'notes.txt'), captureBytes(10));
    fs.mkdirSync(path.join(caps, 'dir.vor'));
    fs.mkdirSync(path.join(caps, 'nested'));
    fs.writeFileSync(path.join(caps, 'nested', 'deep.vor'), captureBytes(10));

    const r = await get(srv.port, '/api/captures');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assertIsolationHeaders(r, 'api');
    const list = JSON.parse(r.body.toString()).captures;
    const byName = Object.fromEntries(list.map((c) => [c.name, c]));
    assert.deepEqual(Object.keys(byName).sort(), ['a.vor', 'b.vor', 'c.vor', 'd.vor', 'single.vor']);

    const a = byName['a.vor'];
    const st = fs.statSync(path.join(caps, 'a.vor'));
    assert.equal(typeof a.id, 'string');
    assert.equal(a.path, path.join(caps, 'a.vor'));
    assert.equal(a.bytes, 1008);
    assert.ok(Math.abs(a.mtime_ms - st.mtimeMs) < 2, `mtime ${a.mtime_ms} vs ${st.mtimeMs}`);
    assert.equal(a.state, 'capture');
    assert.equal(a.ws, `/capture/${a.id}`);
    assert.equal(byName['b.vor'].state, 'not-a-capture');
    assert.equal(byName['c.vor'].state, 'empty');
    assert.equal(byName['d.vor'].state, 'empty');
    assert.equal(byName['single.vor'].state, 'missing');
    assert.equal(byName['single.vor'].path, path.join(root, 'single.vor'));
    for (const n of ['b.vor', 'c.vor', 'd.vor', 'single.vor']) assert.equal(byName[n].ws, undefined, `${n} has a ws link`);
    assert.equal(new Set(list.map((c) => c.id)).size, list.length, 'ids are unique');
  });

  test('rescans: new captures appear, removed ones go, ids stay stable', async () => {
    const before1 = await listCaptures(srv);
    const idA = before1.find((c) => c.name === 'a.vor').id;
    fs.writeFileSync(path.join(caps, 'e.vor'), captureBytes(5));
    fs.writeFileSync(path.join(root, 'single.vor'), captureBytes(7)); // the missing FILE appears
    fs.rmSync(path.join(caps, 'b.vor'));
    const now = await listCaptures(srv);
    const byName = Object.fromEntries(now.map((c) => [c.name, c]));
    assert.ok(byName['e.vor'], 'new capture listed');
    assert.equal(byName['e.vor'].state, 'capture');
    assert.ok(!byName['b.vor'], 'removed capture still listed');
    assert.equal(byName['a.vor'].id, idA, 'id changed across rescans');
    assert.equal(byName['single.vor'].state, 'capture');
    assert.equal(byName['single.vor'].bytes, 15);
    // b.vor comes back: same id as before
    const idB = before1.find((c) => c.name === 'b.vor').id;
    fs.writeFileSync(path.join(caps, 'b.vor'), 'x');
    assert.equal((await listCaptures(srv)).find((c) => c.name === 'b.vor').id, idB);
  });

  test('names are escaped so the JSON always parses (quotes, backslashes, control bytes, bad UTF-8)', async () => {
    const odd = 'we"ird\\na\tme\u00e9\u{1F600}.vor';
    fs.writeFileSync(path.join(caps, odd), captureBytes(1));
    const badUtf8 = Buffer.concat([Buffer.from(caps + '/bad-'), Buffer.from([0xff, 0xc0, 0x80]), Buffer.from('.vor')]);
    fs.writeFileSync(badUtf8, captureBytes(1));
    const r = await get(srv.port, '/api/captures');
    const list = JSON.parse(r.body.toString('utf8')).captures; // throws if the JSON is malformed
    assert.ok(list.some((c) => c.name === odd), 'odd name round-trips');
    const bad = list.find((c) => c.name.startsWith('bad-'));
    assert.equal(bad.name, 'bad-\ufffd\ufffd\ufffd.vor');
    assert.ok(r.body.toString('latin1').includes('\\"') && r.body.toString('latin1').includes('\\t'));
  });

  test('GET /api/captures/<id> returns that entry; unknown ids are 404 JSON errors', async () => {
    const list = await listCaptures(srv);
    const a = list.find((c) => c.name === 'a.vor');
    const one = await fetch(`${srv.http}/api/captures/${a.id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(await one.json(), { ...a, mtime_ms: a.mtime_ms });
    for (const id of ['999', '01', '-1', 'abc', '1x', '99999999999999999999']) {
      const r = await fetch(`${srv.http}/api/captures/${id}`);
      assert.equal(r.status, 404, id);
      const body = await r.json();
      assert.match(body.error, /unknown capture id/, id);
    }
    const other = await fetch(`${srv.http}/api/other`);
    assert.equal(other.status, 404);
    assert.ok((await other.json()).error);
  });
});

describe('who may connect: the Host header', () => {
  const request = (p, host) => rawHttp(srv.port, `GET ${p} HTTP/1.1\r\n${host === null ? '' : `Host: ${host}\r\n`}Connection: close\r\n\r\n`);

  test('a foreign Host (DNS rebinding, cross-site) gets 403 with a short reason, for pages and the API', async () => {
    fs.writeFileSync(path.join(caps, 'hostcheck.vor'), captureBytes(10));
    for (const host of ['evil.example', `evil.example:${srv.port}`, `127.0.0.1.evil.example:${srv.port}`,
      `localhost.evil.example`, `10.11.12.13:${srv.port}`, 'x']) {
      for (const p of ['/', '/app.js', '/api/captures', '/api/captures/0']) {
        const r = await request(p, host);
        assert.equal(r.status, 403, `Host '${host}' ${p}: HTTP ${r.status}`);
        assert.match(r.body.toString(), /foreign Host/);
        assert.ok(!r.body.includes('hostcheck') && !r.body.includes('index'), 'content leaked');
        assertIsolationHeaders(r, `403 for ${host}`);
      }
    }
  });

  test('loopback names (any port), the bound address and no Host at all are served', async () => {
    for (const host of ['127.0.0.1', `127.0.0.1:${srv.port}`, `localhost:${srv.port}`, 'LOCALHOST',
      `[::1]:${srv.port}`, 'localhost:9999']) {
      assert.equal((await request('/app.js', host)).status, 200, `Host '${host}'`);
      assert.equal((await request('/api/captures', host)).status, 200, `Host '${host}'`);
    }
    const r = await rawHttp(srv.port, 'GET /app.js HTTP/1.0\r\n\r\n'); // HTTP/1.0 tools send none
    assert.equal(r.status, 200);
    assert.equal((await fetch(`${srv.http}/api/captures`)).status, 200); // what node/the CLI send
  });

  test('an over-long Host is refused with 431', async () => {
    const r = await request('/', `${'a'.repeat(300)}.localhost`);
    assert.equal(r.status, 431);
  });
});

describe('HEAD and other methods on the API', () => {
  test('HEAD /api/captures: 200, the GET headers (Content-Length included), no body', async () => {
    const g = await get(srv.port, '/api/captures');
    const h = await rawHttp(srv.port, 'HEAD /api/captures HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.equal(h.status, 200);
    assert.equal(h.headers['content-type'], 'application/json');
    assert.equal(h.body.length, 0);
    assert.ok(Math.abs(Number(h.headers['content-length']) - g.body.length) < 64, 'content-length of the listing');
    assertIsolationHeaders(h, 'HEAD api');
    const one = await rawHttp(srv.port, 'HEAD /api/captures/99999 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    assert.equal(one.status, 404);
    assert.equal(one.body.length, 0);
  });

  test('other methods get 405 with "allow: GET, HEAD"', async () => {
    for (const m of ['POST', 'PUT', 'DELETE']) {
      const r = await rawHttp(srv.port, `${m} /api/captures HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      assert.equal(r.status, 405, m);
      assert.equal(r.headers.allow, 'GET, HEAD', m);
    }
    const r = await rawHttp(srv.port, 'POST /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    assert.equal(r.headers.allow, 'GET, HEAD');
  });
});

describe('over-long requests are answered, and do not flood stderr', () => {
  const lwsLines = () => srv.stderr().split('\n').filter((l) => l.includes('libwebsockets')).length;

  test('a path or query of 2 KiB or more gets 414, however long', async () => {
    const before = lwsLines();
    for (const n of [2100, 5000, 20000, 200000]) {
      const r = await get(srv.port, `/${'a'.repeat(n)}`);
      assert.equal(r.status, 414, `path of ${n} bytes: ${r.status}`);
      assert.match(r.body.toString(), /too long/);
      const q = await get(srv.port, `/api/captures?x=${'b'.repeat(n)}`);
      assert.equal(q.status, 414, `query of ${n} bytes: ${q.status}`);
    }
    const ws = await rawHttp(srv.port, `GET /capture/${'9'.repeat(5000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
      'Sec-WebSocket-Version: 13\r\n\r\n');
    assert.equal(ws.status, 414, 'an over-long websocket path is refused before the upgrade');
    assert.equal(lwsLines(), before, `libwebsockets logged:\n${srv.stderr()}`);
  });

  test('big headers the server does not read (Cookie, User-Agent, Referer) are cut, not refused', async () => {
    const big = 'c'.repeat(6000);
    const r = await get(srv.port, '/app.js', `Cookie: ${big}\r\nUser-Agent: ${big}\r\nReferer: http://x/${big}\r\n`);
    assert.equal(r.status, 200);
  });

  test('headers overflowing the request header space: no stderr flood, the server keeps serving', async () => {
    const before = lwsLines();
    const results = await Promise.all(Array.from({ length: 40 }, () =>
      get(srv.port, '/app.js', `X-Huge: ${'h'.repeat(12000)}\r\n`).catch(() => ({ status: 'error' }))));
    for (const r of results) assert.notEqual(r.status, 200);
    assert.equal(lwsLines(), before, `libwebsockets logged:\n${srv.stderr()}`);
    assert.equal((await get(srv.port, '/app.js')).status, 200);
  });
});

describe('idle connections do not lock others out', () => {
  // Two addresses with 32 each: within the per-address quota of unfinished connections, so none
  // of them has to make room (server_hostile.test.mjs covers what happens beyond it).
  test('64 idle connections: a normal request still answers while they are all still open', async () => {
    const idle = [];
    let idleClosed = 0;
    for (let i = 0; i < 64; i++) {
      const s = net.connect({ port: srv.port, host: '127.0.0.1', localAddress: i % 2 ? '127.0.0.2' : '127.0.0.3' });
      s.on('error', () => {});
      s.on('close', () => { idleClosed++; });
      if (i % 2) s.on('connect', () => s.write('GET /app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n')); // never ends
      idle.push(s);
    }
    await Promise.all(idle.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r) : r()))));
    await sleep(200); // let the server accept them all
    try {
      const t0 = performance.now();
      const r = await get(srv.port, '/app.js');
      const ms = performance.now() - t0;
      const closedBefore = idleClosed;
      assert.equal(r.status, 200);
      // Locked out would mean served only once the header timeout (3 s) dropped idle connections:
      // so the answer must come while none of them has been dropped yet. The latency bound itself
      // only has to catch a hang, hence loose.
      assert.equal(closedBefore, 0, `answered only after ${closedBefore} idle connections were dropped (${ms.toFixed(0)} ms)`);
      assert.ok(ms < 3000 * SLOW, `request took ${ms.toFixed(0)} ms with 64 idle connections`);
      const a = await fetch(`${srv.http}/api/captures`);
      assert.equal(a.status, 200);
    } finally {
      for (const s of idle) s.destroy();
    }
  });

  test('a connection that never finishes its request headers is closed after a few seconds', async () => {
    const s = net.connect(srv.port, '127.0.0.1');
    s.on('error', () => {});
    s.on('connect', () => s.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
    s.resume();
    const t0 = performance.now();
    // The server allows 3 s (SERVER_HEADER_IDLE_S), checked about once a second: 3-4 s. The upper
    // bound stays below libwebsockets' default (10 s) on a plain build, so the setting is checked.
    const upper = 8000 * SLOW;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { s.destroy(); reject(new Error(`still open after ${upper + 2000} ms`)); }, upper + 2000);
      s.on('close', () => { clearTimeout(timer); resolve(); });
    });
    const ms = performance.now() - t0;
    assert.ok(ms > 1500 && ms < upper, `closed after ${ms.toFixed(0)} ms`);
  });
});

describe('a FIFO given as a capture', () => {
  test('is listed as not-a-file and never blocks the server', async () => {
    const dir = makeTmp('fifo');
    const fifo = path.join(dir, 'pipe.vor');
    execFileSync('mkfifo', [fifo]);
    const s = await startServer([fifo]);
    try {
      const t0 = performance.now();
      const list = await listCaptures(s);
      assert.ok(performance.now() - t0 < 3000 * SLOW);
      assert.equal(list[0].state, 'not-a-file');
      assert.equal(list[0].ws, undefined);
      const one = await fetch(`${s.http}/api/captures/${list[0].id}`);
      assert.equal(one.status, 200);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('many captures over time', () => {
  test('after 1,100 capture names came and went, a new capture is still listed', async () => {
    const dir = makeTmp('churn');
    const s = await startServer([dir]);
    try {
      for (let batch = 0; batch < 11; batch++) {
        const names = Array.from({ length: 100 }, (_, i) => `b${batch}-${i}.vor`);
        for (const n of names) fs.writeFileSync(path.join(dir, n), MAGIC);
        assert.equal((await listCaptures(s)).length, 100, `batch ${batch} listed`);
        for (const n of names) fs.rmSync(path.join(dir, n));
        assert.equal((await listCaptures(s)).length, 0);
      }
      fs.writeFileSync(path.join(dir, 'fresh.vor'), captureBytes(10));
      const list = await listCaptures(s);
      assert.equal(list.length, 1);
      assert.equal(list[0].name, 'fresh.vor');
      assert.equal(list[0].state, 'capture');
      const body = await (await fetch(`${s.http}/api/captures`)).json();
      assert.equal(body.truncated, undefined);
    } finally {
      assert.equal((await s.stop()).code, 0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('start-up warnings', () => {
  test('a non-loopback --host warns that captures are reachable without authentication', async () => {
    const s = await startServer(['--host', '0.0.0.0', '--site', site]);
    const r = await s.stop();
    assert.equal(r.code, 0);
    assert.match(r.stderr, /warning: --host 0\.0\.0\.0 is not a loopback address: captures are readable by anyone on that network, without authentication/);
    assert.equal(r.stderr.split('\n').filter((l) => l.includes('loopback')).length, 1);
    const quiet = await startServer(['--site', site]);
    const q = await quiet.stop();
    assert.ok(!q.stderr.includes('loopback'), q.stderr);
  });
});

describe('stop', () => {
  test('SIGTERM stops the server cleanly (exit 0) and promptly', async () => {
    const s = await startServer(['--site', site, caps]);
    assert.equal((await get(s.port, '/app.js')).status, 200);
    const r = await s.stop();
    assert.equal(r.code, 0, r.stderr);
    // Idle, it stops within STOP_CHECK_MS (0.1 s); a stop that never came is SIGKILLed (code null).
    assert.ok(r.ms < 3000 * SLOW, `stop took ${r.ms} ms`);
  });

  test('bad arguments exit 2 with one message', async () => {
    for (const args of [['--port', 'x'], ['--port', '70000'], ['--host', 'nowhere'], ['--bogus'], ['--site']]) {
      await assert.rejects(startServer(args), /exited with 2/, args.join(' '));
    }
  });
});
