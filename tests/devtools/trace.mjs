// trace.mjs: records what the DevTools Performance panel records (a CDP trace) and reads vor's
// entries back out of it. Shared by devtools.test.mjs and bench/devtools.
//
//   const rec = await startTrace(cdp);        // cdp = await browser.context.newCDPSession(page)
//   ...                                       // run the page
//   const events = await rec.stop();          // every trace event (array of objects)
//   const entries = userTimingEntries(events); // performance.measure pairs: {name, rawName, start, end, devtools, ...}
//   const stamps = timeStampEntries(events);   // extended console.timeStamp: {name, start, end, track, ...}
//   const seen = await traceEngineEntries(events); // what the DevTools trace engine makes of them
//   rec.dataLoss()                             // after stop(): Chrome's buffer overflowed
//
// Categories as a DevTools recording uses them: blink.user_timing (performance.measure/mark: async "b"/"e" pairs whose
// args.detail is a JSON string), devtools.timeline (console.timeStamp: "TimeStamp" instant events
// with args.data.{message,start,end,track,trackGroup,color}, start/end in trace microseconds) and
// disabled-by-default-devtools.timeline (UpdateCounters, as a real recording has). Times below are
// trace microseconds. vor ends each User Timing name it makes with VOR_NAME_SUFFIX (U+2060, see
// wasm/js/devtools.js); entries are read back with `name` without it and `rawName` as recorded,
// and stripVorSuffix does the same for names read elsewhere (a PerformanceObserver's).

export const TRACE_CATEGORIES = [
  'blink.user_timing', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'v8.execute', 'blink.console', 'toplevel',
];

/**
 * Starts a trace over CDP (recordMode 'recordUntilFull' like a DevTools recording, or
 * 'recordContinuously': a ring buffer that never stops, for long benchmarks; bufferKb: a trace
 * buffer of that size instead of Chrome's default, about 200 MB); resolves to
 * {stop(): Promise<events[]>, discard(): Promise<void>}.
 */
export async function startTrace(cdp, categories = TRACE_CATEGORIES, recordMode = 'recordUntilFull', { bufferKb = 0 } = {}) {
  await cdp.send('Tracing.start', {
    transferMode: 'ReturnAsStream',
    traceConfig: { includedCategories: categories, excludedCategories: ['*'], recordMode, ...(bufferKb ? { traceBufferSizeInKb: bufferKb } : {}) },
  });
  let dataLoss = null;
  const finish = async (read) => {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    const { stream, dataLossOccurred } = await complete;
    dataLoss = dataLossOccurred === true;
    if (!read) { await cdp.send('IO.close', { handle: stream }); return []; }
    const chunks = [];
    for (;;) {
      const r = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
      chunks.push(r.base64Encoded ? Buffer.from(r.data, 'base64').toString('utf8') : r.data);
      if (r.eof) break;
    }
    await cdp.send('IO.close', { handle: stream });
    const json = JSON.parse(chunks.join(''));
    return Array.isArray(json) ? json : json.traceEvents;
  };
  return { stop: () => finish(true), discard: () => finish(false), dataLoss: () => dataLoss };
}

/**
 * vor's custom tracks as the DevTools Performance panel itself sees them: `events` parsed by the
 * DevTools trace engine (npm @paulirish/trace_engine, the frontend's own trace model, pinned in
 * package-lock.json). Returns every extension track entry, in the engine's order:
 * [{group, track, name (without vor's suffix), start, end (trace us), devtools, userDetail,
 *   parent (the entry the engine nests it under, or null), inTree (the engine could place it)}].
 * An entry the engine drops (a zero-length performance.measure is one) is simply not there.
 */
export async function traceEngineEntries(events) {
  await import('@paulirish/trace_engine/analyze-trace.mjs'); // its DOMRect polyfill, which the engine needs in node
  const Trace = await import('@paulirish/trace_engine');
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const parsed = model.parsedTrace();
  const data = parsed.data ?? parsed;
  const { extensionTrackData, entryToNode } = data.ExtensionTraceData;
  const out = [];
  const byEntry = new Map();
  for (const group of extensionTrackData) {
    for (const [track, entries] of Object.entries(group.entriesByTrack)) {
      for (const e of entries) {
        const entry = {
          group: group.isTrackGroup ? group.name : undefined, track, name: stripVorSuffix(e.name),
          start: e.ts, end: e.ts + (e.dur ?? 0), devtools: e.devtoolsObj, userDetail: e.userDetail ?? null,
          parent: null, inTree: entryToNode.has(e),
        };
        byEntry.set(e, entry);
        out.push(entry);
      }
    }
  }
  for (const [e, entry] of byEntry) entry.parent = byEntry.get(entryToNode.get(e)?.parent?.entry) ?? null;
  return out;
}

/** The suffix that ends every User Timing name vor makes (devtools.js, NAME_SUFFIX). */
export const VOR_NAME_SUFFIX = '\u2060';

/** `name` without vor's suffix (unchanged when it has none). */
export function stripVorSuffix(name) {
  return typeof name === 'string' && name.endsWith(VOR_NAME_SUFFIX) ? name.slice(0, -VOR_NAME_SUFFIX.length) : name;
}

function parseDetail(text) {
  if (typeof text !== 'string') return text ?? null;
  try { return JSON.parse(text); } catch { return null; }
}

/**
 * performance.measure entries. Chromium writes each as an async "b"/"e" pair of cat
 * blink.user_timing (a zero-length one as a single "n"), sorted by time; the pair's id2.local is
 * reused once an entry is closed, so pairs are matched per (name, id) as a stack, in time order
 * (the trace's own order breaks ties). Returns [{name (without vor's suffix), rawName, start, end,
 * detail, devtools, track, trackGroup, color, properties: Map}] sorted by start (ties: longer first, so parents precede
 * their children).
 */
export function userTimingEntries(events) {
  const timed = events
    .map((e, i) => [e, i])
    .filter(([e]) => e.cat === 'blink.user_timing' && (e.ph === 'b' || e.ph === 'e' || e.ph === 'n'))
    .sort((a, b) => a[0].ts - b[0].ts || a[1] - b[1]);
  const open = new Map();
  const out = [];
  const entry = (b, endTs) => {
    const detail = parseDetail(b.args?.detail);
    const dt = detail?.devtools ?? null;
    out.push({
      name: stripVorSuffix(b.name), rawName: b.name, start: b.ts, end: endTs, detail, devtools: dt,
      track: dt?.track, trackGroup: dt?.trackGroup, color: dt?.color,
      properties: new Map(dt?.properties ?? []),
    });
  };
  for (const [e] of timed) {
    if (e.ph === 'n') { entry(e, e.ts); continue; }
    const key = `${e.name}\u0000${e.id2?.local ?? e.id2?.global ?? e.id}`;
    if (e.ph === 'b') {
      if (!open.has(key)) open.set(key, []);
      open.get(key).push(e);
    } else {
      const b = open.get(key)?.pop();
      if (b) entry(b, e.ts);
    }
  }
  return out.sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start));
}

/**
 * performance.mark events of cat blink.user_timing named `name` (compared without vor's suffix):
 * [{name, rawName, ts, detail}].
 */
export function userTimingMarks(events, name) {
  return events.filter((e) => e.cat === 'blink.user_timing' && stripVorSuffix(e.name) === name && e.ph !== 'b' && e.ph !== 'e')
    .map((e) => ({ name: stripVorSuffix(e.name), rawName: e.name, ts: e.ts, detail: parseDetail(e.args?.data?.detail ?? e.args?.detail) }));
}

/** Extended console.timeStamp entries (with a track): [{name, start, end, track, trackGroup, color}]. */
export function timeStampEntries(events) {
  const out = [];
  for (const e of events) {
    if (e.name !== 'TimeStamp' || !e.args?.data) continue;
    const d = e.args.data;
    if (d.track === undefined && d.start === undefined) continue;
    out.push({ name: d.message ?? d.name, start: Number(d.start), end: Number(d.end), track: d.track, trackGroup: d.trackGroup, color: d.color, data: d });
  }
  return out.sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start));
}
