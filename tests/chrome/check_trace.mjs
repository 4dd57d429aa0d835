// check_trace.mjs: loads a Chrome Trace Event JSON file the way trace viewers do, checks
// it, and prints one line per event for the C tests to compare.
//
//   node check_trace.mjs MODE FILE [--summary]
//   MODE strict    the file must be complete JSON (what vor_shutdown leaves)
//        catapult  chrome://tracing's rule for an unfinished JSON array: if the text starts
//                  with "[", trailing newlines and one trailing comma are removed and "]"
//                  is appended when missing; then JSON.parse (what a crash leaves)
//        perfetto  Perfetto's rule: an unfinished array is accepted and an incomplete
//                  final event is dropped (a write torn by SIGKILL or a full disk)
//
// Checks: the first byte is "["; the bytes are valid UTF-8 (fatal decoder); the text
// parses; every event has a phase; X events have numeric ts/dur (dur >= 0), integer
// pid/tid and a string name; ts and dur of X and C events are written with exactly three
// decimals; per (pid, tid) the X events nest (each one inside the enclosing one or after
// it, never straddling its end); C events carry finite numbers; M events are
// process_name, thread_name or thread_sort_index. vor's X events carry no args (speedscope
// names an event by its name plus its args): what vor adds is in their categories,
// "vor,src:FILE:LINE[,clipped_start][,clipped_end][,unwound]" for a scope and
// "vor.frame,index:N,scopes:N,dropped:N,overhead_ns:N[,CAUSE:N]" for a frame, read back
// here as the file, line and args the output lines show (args themselves still read).
//
// The nesting check is the one to use on any trace vor writes (VOR_TRACE, `vor export
// --format chrome`): zero partial overlaps per thread, across frames too. With --summary,
// for large traces (thousands of frames), it prints one JSON line instead of the events:
//   {"events":N,"slices":N,"threads":N}
//
// Output lines (strings as hex of their UTF-8 bytes, "-" when empty or absent; times as
// integer nanoseconds):
//   X pid tid ts_ns dur_ns name_hex cat_hex file_hex|- line|- args_json
//   M pid tid what value      (value: hex of args.name, or the sort index)
//   C pid ts_ns name_hex series_hex value
// Exit status 0 when every check passes, 1 with a message on stderr otherwise.
import { readFileSync } from 'node:fs';

function fail(message) {
  process.stderr.write(`check_trace: ${message}\n`);
  process.exit(1);
}

const [mode, file, option] = process.argv.slice(2);
if (!['strict', 'catapult', 'perfetto'].includes(mode) || !file || (option !== undefined && option !== '--summary'))
  fail('usage: check_trace.mjs strict|catapult|perfetto FILE [--summary]');

const bytes = readFileSync(file);
if (bytes.length === 0 || bytes[0] !== 0x5b) fail('the first byte is not "["');
let text;
try {
  text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
} catch (e) {
  fail(`not valid UTF-8: ${e.message}`);
}

function catapultFixup(t) {
  // The trace viewer's own repair of an unfinished array format.
  t = t.replace(/[\r|\n]*$/, '').replace(/\s*,\s*$/, '');
  if (t[t.length - 1] !== ']') t += ']';
  return t;
}

function perfettoFixup(t) {
  // Keep the complete events: each event is one line; an incomplete last line is dropped.
  let trimmed = t.replace(/\s+$/, '');
  if (trimmed.endsWith(']')) return trimmed;
  const lines = trimmed.split('\n');
  while (lines.length > 1) {
    const last = lines[lines.length - 1].replace(/,$/, '');
    try {
      JSON.parse(last);
      break;
    } catch {
      lines.pop();
    }
  }
  return catapultFixup(lines.join('\n'));
}

let events;
const source = mode === 'strict' ? text : mode === 'catapult' ? catapultFixup(text) : perfettoFixup(text);
try {
  events = JSON.parse(source);
} catch (e) {
  fail(`does not parse (${mode}): ${e.message}`);
}
if (!Array.isArray(events)) fail('the top level is not an array');

// Raw number text of X and C events: exactly three decimals.
for (const line of source.split('\n')) {
  if (!line.startsWith('{"ph":"X"') && !line.startsWith('{"ph":"C"')) continue;
  for (const m of line.matchAll(/"(ts|dur)":([^,}]*)/g)) {
    if (!/^-?\d+\.\d{3}$/.test(m[2])) fail(`"${m[1]}":${m[2]} is not microseconds with three decimals: ${line}`);
  }
}

// "vor,src:FILE:LINE,clipped_end" -> {cat: "vor", file, line, flags: {clipped_end: true}}
// (FILE may hold commas and colons: flags are taken from the end, the line after the last ':');
// "vor.frame,index:7,scopes:9" -> {cat: "vor.frame", flags: {index: 7, scopes: 9}}.
function readCategories(text) {
  const found = [];
  let rest = text;
  for (;;) {
    const m = rest.match(/,(clipped_start|clipped_end|unwound)$/);
    if (!m) break;
    found.unshift(m[1]);
    rest = rest.slice(0, -m[0].length);
  }
  const flags = Object.fromEntries(found.map((f) => [f, true]));
  if (rest.startsWith('vor.frame,')) {
    // A frame's figures: "vor.frame,index:7,scopes:9,...", numbers.
    const [cat, ...pairs] = rest.split(',');
    for (const pair of pairs) {
      const colon = pair.indexOf(':');
      if (colon < 0 || !/^-?\d+$/.test(pair.slice(colon + 1))) fail(`bad frame category '${pair}' in '${text}'`);
      flags[pair.slice(0, colon)] = Number(pair.slice(colon + 1));
    }
    return { cat, flags };
  }
  const src = rest.indexOf(',src:');
  if (src < 0) return { cat: rest, flags };
  const location = rest.slice(src + 5);
  const colon = location.lastIndexOf(':');
  return { cat: rest.slice(0, src), file: location.slice(0, colon), line: location.slice(colon + 1), flags };
}

const hex = (s) => (s === '' ? '-' : Buffer.from(s, 'utf8').toString('hex'));
const ns = (us) => Math.round(us * 1000);
const isInt = (v) => Number.isInteger(v) && v >= 0;
const out = [];
const slicesByThread = new Map();

events.forEach((e, i) => {
  const where = `event ${i} ${JSON.stringify(e).slice(0, 200)}`;
  if (typeof e !== 'object' || e === null || typeof e.ph !== 'string') fail(`${where}: no phase`);
  if (e.ph === 'X') {
    if (typeof e.ts !== 'number' || typeof e.dur !== 'number' || e.dur < 0) fail(`${where}: bad ts/dur`);
    if (!isInt(e.pid) || !isInt(e.tid)) fail(`${where}: bad pid/tid`);
    if (typeof e.name !== 'string') fail(`${where}: no name`);
    const { cat, file: fileText, line: lineNumber, flags } = readCategories(e.cat ?? '');
    const args = { ...(e.args || {}) };
    const file = typeof args.file === 'string' ? hex(args.file) : fileText !== undefined ? hex(fileText) : '-';
    const line = args.line !== undefined ? String(args.line) : lineNumber !== undefined ? lineNumber : '-';
    const rest = { ...args, ...flags };
    delete rest.file;
    delete rest.line;
    out.push(`X ${e.pid} ${e.tid} ${ns(e.ts)} ${ns(e.dur)} ${hex(e.name)} ${hex(cat)} ${file} ${line} ${JSON.stringify(rest)}`);
    const key = `${e.pid}/${e.tid}`;
    if (!slicesByThread.has(key)) slicesByThread.set(key, []);
    slicesByThread.get(key).push({ start: ns(e.ts), end: ns(e.ts) + ns(e.dur), name: e.name });
  } else if (e.ph === 'M') {
    if (!isInt(e.pid) || !isInt(e.tid) || typeof e.args !== 'object') fail(`${where}: bad metadata event`);
    if (e.name === 'process_name' || e.name === 'thread_name') {
      if (typeof e.args.name !== 'string') fail(`${where}: no args.name`);
      out.push(`M ${e.pid} ${e.tid} ${e.name} ${hex(e.args.name)}`);
    } else if (e.name === 'thread_sort_index') {
      if (!Number.isInteger(e.args.sort_index)) fail(`${where}: no args.sort_index`);
      out.push(`M ${e.pid} ${e.tid} ${e.name} ${e.args.sort_index}`);
    } else {
      fail(`${where}: unknown metadata`);
    }
  } else if (e.ph === 'C') {
    if (typeof e.ts !== 'number' || !isInt(e.pid) || typeof e.name !== 'string') fail(`${where}: bad counter`);
    const series = Object.keys(e.args || {});
    if (series.length === 0) fail(`${where}: counter without a value`);
    for (const s of series) {
      if (typeof e.args[s] !== 'number' || !Number.isFinite(e.args[s])) fail(`${where}: non-numeric value`);
      out.push(`C ${e.pid} ${ns(e.ts)} ${hex(e.name)} ${hex(s)} ${JSON.stringify(e.args[s])}`);
    }
  } else {
    fail(`${where}: unexpected phase ${e.ph}`);
  }
});

// Nesting: sorted by start (longer first on ties), each slice lies inside the innermost
// open one or starts at or after its end, never straddling it.
for (const [key, slices] of slicesByThread) {
  slices.sort((a, b) => a.start - b.start || b.end - a.end);
  const open = [];
  for (const s of slices) {
    while (open.length) {
      const top = open[open.length - 1];
      if (s.end <= top.end) break; // inside (starts are sorted)
      if (s.start >= top.end) {
        open.pop();
        continue;
      }
      fail(`thread ${key}: partial overlap: "${s.name}" [${s.start}, ${s.end}] straddles the end of "${top.name}" [${top.start}, ${top.end}]`);
    }
    open.push(s);
  }
}

if (option === '--summary') {
  let slices = 0;
  for (const list of slicesByThread.values()) slices += list.length;
  process.stdout.write(JSON.stringify({ events: events.length, slices, threads: slicesByThread.size }) + '\n');
} else {
  process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
}
