// slow_clients.mjs - connections that never complete a request (slowloris), for the server's
// tests and benchmark; node builtins only.
//
// As a module: `new SlowClients(port, count, options)`, see the class. As a program, so the
// attack runs on its own event loop and never delays the client that measures the server:
//   node slow_clients.mjs PORT COUNT[@ADDRESS] [COUNT@ADDRESS ...]
// opens the connections (reconnecting those the server closes), prints "READY" once all are
// connected, and on SIGTERM prints {"connects":N,"closedByServer":N,"open":N} and exits.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * `count` connections from `localAddress` that never complete a request: every other one sends
 * the start of a request and then one more header line every 500 ms (slowloris), the rest send
 * nothing. A connection the server closes comes back after about `reconnectMs` (spread over
 * 0.5 to 1.5 times that, so they do not come back in one wave), or never when it is null.
 */
export class SlowClients {
  constructor(port, count, { localAddress = '127.0.0.1', reconnectMs = 500 } = {}) {
    Object.assign(this, { port, count, localAddress, reconnectMs });
    this.running = true;
    this.connects = 0;
    this.closedByServer = 0;
    this.socks = new Set();
    this.timers = new Set();
  }

  /** Opens them all; resolves once each has connected (at least) once. */
  start(timeoutMs = 20000) {
    for (let i = 0; i < this.count; i++) this.spawn(i);
    return new Promise((resolve, reject) => {
      const t0 = Date.now();
      const check = () => {
        if (this.connects >= this.count) return resolve();
        if (Date.now() - t0 > timeoutMs) return reject(new Error(`${this.connects} of ${this.count} slow connections`));
        setTimeout(check, 10);
      };
      check();
    });
  }

  spawn(i) {
    const s = net.connect({ port: this.port, host: '127.0.0.1', localAddress: this.localAddress });
    let dribble = null;
    this.socks.add(s);
    s.on('error', () => {});
    s.on('connect', () => {
      this.connects++;
      if (i % 2) {
        s.write('GET /api/captures HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        dribble = setInterval(() => s.write('X-Slow: 1\r\n'), 500);
      }
    });
    s.on('close', () => {
      clearInterval(dribble);
      this.socks.delete(s);
      if (!this.running) return;
      this.closedByServer++;
      if (this.reconnectMs === null) return;
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (this.running) this.spawn(i);
      }, this.reconnectMs * (0.5 + Math.random()));
      this.timers.add(t);
    });
  }

  stop() {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.socks) s.destroy();
  }
}

/**
 * Runs this file as a program (the slow clients on their own event loop); resolves once they
 * are all connected, with stop(), which resolves with {connects, closedByServer, open}.
 * groups: "COUNT@ADDRESS" strings.
 */
export async function startSlowProcess(port, groups, timeoutMs = 20000) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(port), ...groups],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((r) => child.on('exit', r));
  const t0 = Date.now();
  while (!out.includes('READY')) {
    if (child.exitCode !== null || Date.now() - t0 > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`slow clients did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(out.split('\n').find((l) => l.startsWith('{')) ?? '{}');
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.argv[2]);
  const groups = process.argv.slice(3).map((arg) => {
    const [count, localAddress = '127.0.0.1'] = arg.split('@');
    return new SlowClients(port, Number(count), { localAddress });
  });
  process.on('SIGTERM', () => {
    const sum = (f) => groups.reduce((n, g) => n + f(g), 0);
    const stats = { connects: sum((g) => g.connects), closedByServer: sum((g) => g.closedByServer), open: sum((g) => g.socks.size) };
    for (const g of groups) g.stop();
    process.stdout.write(`${JSON.stringify(stats)}\n`, () => process.exit(0));
  });
  Promise.all(groups.map((g) => g.start())).then(() => process.stdout.write('READY\n'),
    (e) => { process.stderr.write(`${e.message}\n`); process.exit(1); });
}
