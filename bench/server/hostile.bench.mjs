// hostile.bench.mjs - `vor serve` under hostile load (prints, asserts nothing; `make bench`).
//
// Usage: node bench/server/hostile.bench.mjs [path to test_server_host]
//        (default build/native/bin/test_server_host: what `vor serve` runs, plus "READY <port>")
// Every client is on loopback; other addresses of 127.0.0.0/8 stand for other machines. The slow
// clients run in a process of their own (tests/server/slow_clients.mjs) so their work does not
// delay the measuring client; all of it shares the machine's cores with the server, so compare
// the figures under load with the floor measured in the same run.
//   panel     GET / and GET /api/captures, one at a time every 25 ms: alone, then while 1,000
//             slow or idle connections (500 from the client's own address, 50 from each of 10
//             others) keep coming back; latency percentiles, server CPU share
//   viewers   time until a new viewer receives its first bytes while 64 viewers that never read
//             hold every slot: streaming a 16 MiB capture (stalled on a full socket), and parked
//             at the end of a quiet capture (found out by an unanswered ping)
//   fds       the server under `ulimit -n 128` with 300 idle connections from 10 addresses:
//             its CPU share over 3 s and a normal request's latency
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
process.env.VOR_SERVER_HOST_BIN = path.resolve(process.argv[2] || path.join(root, 'build/native/bin/test_server_host'));
if (!fs.existsSync(process.env.VOR_SERVER_HOST_BIN)) {
  console.log(`hostile.bench: ${process.env.VOR_SERVER_HOST_BIN} not built; skipped`);
  process.exit(0);
}
const { captureBytes, captureId, cpuSeconds, firstBytesMs, get, makeTmp, sleep, stalledViewer, startServer } =
  await import('../../tests/server/server_harness.mjs');
const { SlowClients, startSlowProcess } = await import('../../tests/server/slow_clients.mjs');

const dir = makeTmp('bench-hostile');
fs.mkdirSync(path.join(dir, 'site'));
fs.mkdirSync(path.join(dir, 'caps'));
fs.writeFileSync(path.join(dir, 'site', 'index.html'), '<!doctype html><title>vor</title>');
fs.writeFileSync(path.join(dir, 'caps', 'quiet.vor'), captureBytes(1000));
fs.writeFileSync(path.join(dir, 'caps', 'big.vor'), captureBytes(16 * 1024 * 1024));
const args = ['--site', path.join(dir, 'site'), path.join(dir, 'caps')];

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => `${x.toFixed(1)} ms`;

async function fetchMs(port, pathText, localAddress = '127.0.0.1') {
  const t0 = performance.now();
  const r = await get(port, pathText, '', { localAddress, timeoutMs: 10000 });
  return r.status === 200 ? performance.now() - t0 : Infinity;
}

async function requests(s, n) {
  const times = [];
  const cpu0 = cpuSeconds(s.child.pid);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    times.push(await fetchMs(s.port, i % 2 ? '/api/captures' : '/'));
    await sleep(25);
  }
  const cpu = (cpuSeconds(s.child.pid) - cpu0) / ((performance.now() - t0) / 1000);
  const failed = times.filter((t) => t === Infinity).length;
  return `median ${ms(pct(times, 0.5))}, p95 ${ms(pct(times, 0.95))}, max ${ms(Math.max(...times))}` +
    `${failed ? `, ${failed} failed` : ''}; server CPU ${(cpu * 100).toFixed(0)}%`;
}

async function panel() {
  const s = await startServer(args);
  try {
    console.log(`panel, alone:                        ${await requests(s, 100)}`);
    const groups = ['500@127.0.0.1'];
    for (let k = 0; k < 10; k++) groups.push(`50@127.0.0.${20 + k}`);
    const slow = await startSlowProcess(s.port, groups);
    await sleep(1000);
    const line = await requests(s, 100);
    const st = await slow.stop();
    console.log(`panel, 1,000 slow connections:       ${line}`);
    console.log(`  slow connections: ${st.connects} made, ${st.closedByServer} closed by the server, ${st.open} open at the end`);
  } finally {
    await s.stop();
  }
}

/** Time to a new viewer's first bytes, or Infinity when it is refused. */
const newViewerMs = (s, id, localAddress) =>
  firstBytesMs(`${s.ws}/capture/${id}`, { localAddress }).catch(() => Infinity);

async function viewers(name) {
  const s = await startServer(args);
  const stalls = [];
  try {
    const id = await captureId(s, name);
    for (let i = 0; i < 64; i++) stalls.push(await stalledViewer(s.port, `/capture/${id}`, { localAddress: `127.0.0.${2 + (i % 2)}` }));
    await sleep(200);
    // The first newcomer comes while the stalled viewers are fresh (a viewer is judged stalled
    // after 0.4 s without progress); the next ones find stalled viewers at once.
    const times = [];
    for (let i = 0; i < 10; i++) times.push(await newViewerMs(s, id, i % 2 ? '127.0.0.2' : '127.0.0.4'));
    const rest = times.slice(1);
    console.log(`new viewer, 64 stalled (${name.padEnd(9)}): first ${ms(times[0])}, next 9: median ` +
      `${ms(pct(rest, 0.5))}, max ${ms(Math.max(...rest))} (each takes a stalled viewer's slot)`);
  } finally {
    for (const sock of stalls) sock.destroy();
    await s.stop();
  }
}

async function descriptors() {
  const s = await startServer(args, {}, { nofile: 128 });
  const idle = [];
  try {
    for (let k = 0; k < 10; k++) idle.push(new SlowClients(s.port, 30, { localAddress: `127.0.0.${10 + k}`, reconnectMs: null }));
    await Promise.all(idle.map((c) => c.start()));
    await sleep(300);
    const cpu0 = cpuSeconds(s.child.pid);
    const t0 = performance.now();
    const t = await fetchMs(s.port, '/api/captures');
    await sleep(3000);
    const cpu = (cpuSeconds(s.child.pid) - cpu0) / ((performance.now() - t0) / 1000);
    console.log(`ulimit -n 128, 300 idle connections: server CPU ${(cpu * 100).toFixed(1)}% over 3 s; ` +
      `normal request ${ms(t)}; ${idle.reduce((n, c) => n + c.closedByServer, 0)} idle connections closed by the ` +
      'server (to make room, then by the 3 s header timeout)');
  } finally {
    for (const c of idle) c.stop();
    await s.stop();
  }
}

try {
  await panel();
  await viewers('big.vor');
  await viewers('quiet.vor');
  await descriptors();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
