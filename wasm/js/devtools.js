// @ts-check
// devtools.js: the JavaScript half of vor's browser sink (wasm/src/browser_sink.c), linked into
// every WebAssembly build of libvor as an Emscripten JS library (--js-library; 3.1.6 has no
// addToLibrary, hence mergeInto). It turns frame records, read straight out of wasm linear memory,
// into entries on custom tracks of the Chrome DevTools Performance panel.
//
// Shape: one call per frame (vor_devtools_js_frame) with a descriptor holding a pointer to the
// entries C chose and laid out (wasm/src/devtools_entries.h: the budget, the minimum duration,
// every scope at least one clock step wide and nested) and to the frame record's threads. New
// names come first in the same call (sites, threads, metric columns), each decoded to a JS string
// once and kept in a table by id: a site keeps its name, file:line, colour and a prepared `detail`
// object, so an entry costs reading two 32-bit words and two doubles plus the browser call; no
// per-entry allocation on our side (performance.measure still allocates its entry). The
// descriptor layout is fixed by static asserts in browser_sink.c; the offsets below must match.
//
//   USER_TIMING (1): performance.measure(name + NAME_SUFFIX, {start, end, detail: {devtools:
//     {dataType: 'track-entry', track: <thread>, trackGroup, color, properties: [['location',
//     'file:line'], ['frame', index]], tooltipText}}}) per scope; per frame, performance.mark
//     ('vor.frame' + NAME_SUFFIX) at its start and a measure 'frame <index>' + NAME_SUFFIX on the
//     "Frames" track whose properties hold the frame's metrics. Then every entry made is cleared by
//     the names used (performance.clearMeasures(name), clearMarks(mark)) so the page's entry buffer
//     stays bounded; PerformanceObservers still receive them (they are queued when made). Every
//     such name ends with NAME_SUFFIX, U+2060 WORD JOINER (invisible in DevTools), so clearing by
//     name never touches the page's own entries, even one named like a scope. Chromium
//     structured-clones `detail` at the call, so reusing one detail object per site is safe; only
//     its track and frame fields change.
//   FAST (2): the extended console.timeStamp(name, start, end, track, trackGroup, color) per scope
//     and per frame: DevTools only, no details, several times cheaper while a trace records (no
//     entry is kept, so no suffix).
// Names: a site's name comes cut as every vor output cuts it (C hands over its length: at most
// 255 bytes, at a UTF-8 character boundary), so one site has one name everywhere.
// Times: performance.now() ms = (epoch_ns + start_ns) / 1e6 (vor's wasm clock is performance.now()).
// Colours: the DevTools palette without 'error'/'warning', picked by an FNV-1a hash of the site's
// name, so a scope keeps its colour across frames, threads and runs.
//
// Frame entries carry the frame's counts (scopes, left out by the budget or the minimum
// duration), the clock's step and whether the page is cross-origin isolated, the width of a
// zero-length scope, and the metrics; fast mode puts them in the entry's data. A page that is not
// isolated gets one console warning per realm when a session starts (vor_devtools_js_clock).
// Microseconds are written µs.
//
// Costs (bench/devtools has this machine's figures): an emitted scope costs about what the browser call alone
// does: performance.measure with a devtools detail ~3-4 us (~7-10 us while DevTools records a
// trace), console.timeStamp ~0.1 us (~2-3 us while recording). Per frame: the frame entry (and, in
// user-timing mode, a mark and one clearMeasures per distinct name), tens of us at most.
//
// Bounds: sites by id up to SITE_LIMIT (vor's VOR_MAX_SITES), columns up to COLUMN_LIMIT, threads
// as many as the C side keeps (it tells us to forget them when it clears its own table).
// Never throws into C: failures return 1 with a message that C reports once, and C turns the sink
// off. Module.vorDevtools lets the page change the settings (applied at the next frame). The
// requests and the mode in effect live in linear memory (browser_sink.c, page_settings_t), not in
// this realm, so that they reach a frame thread that is a worker: C hands over their address at
// start-up (vor_devtools_js_settings; until then requests wait here), the page writes a request
// under a spin lock (Atomics on HEAP32) and raises `pending`, and the frame thread pulls it.

var LibraryVorDevtools = {
  $VorDevtools__postset: 'VorDevtools.init();',
  $VorDevtools: {
    PALETTE: ['primary', 'primary-light', 'primary-dark', 'secondary', 'secondary-light', 'secondary-dark',
      'tertiary', 'tertiary-light', 'tertiary-dark'],
    FRAME_COLORS: ['tertiary-light', 'tertiary-dark'],
    MODE_NAMES: ['off', 'user-timing', 'fast'],
    FRAMES_TRACK: 'Frames',
    NAME_SUFFIX: '\u2060', // ends every User Timing name vor makes (and clears)
    FRAME_MARK: 'vor.frame',
    SITE_LIMIT: 65537,
    COLUMN_LIMIT: 264,

    init: function() {
      VorDevtools.defaultMode = VorDevtools.inBrowser() ? 1 : 0; // C's default until a frame says otherwise
      VorDevtools.shared = 0; // address of page_settings_t, once C handed it over
      VorDevtools.early = { mode: -1, minNs: null, group: null, budget: null }; // requests made before that
      VorDevtools.frameMark = VorDevtools.FRAME_MARK + VorDevtools.NAME_SUFFIX;
      VorDevtools.opts = { start: 0, end: 0, detail: null };
      VorDevtools.used = [];
      VorDevtools.trackOfIndex = [];
      VorDevtools.serial = 0;
      VorDevtools.warnedClock = false;
      VorDevtools.reset();
      Module['vorDevtools'] = {
        'setMode': VorDevtools.apiSetMode,
        'getMode': VorDevtools.apiGetMode,
        'setTrackGroup': VorDevtools.apiSetTrackGroup,
        'setMinDurationMs': VorDevtools.apiSetMinDurationMs,
        'setEntryBudget': VorDevtools.apiSetEntryBudget,
        'colorOf': VorDevtools.colorOf,
        'palette': VorDevtools.PALETTE.slice(),
      };
    },

    inBrowser: function() {
      if (typeof window === 'object' && typeof document === 'object') return true;
      return typeof WorkerGlobalScope !== 'undefined' && typeof self === 'object' && self instanceof WorkerGlobalScope;
    },

    reset: function() {
      VorDevtools.sites = [];
      VorDevtools.columns = [];
      VorDevtools.group = 'vor';
      VorDevtools.groupArg = 'vor';
      VorDevtools.forgetThreads();
    },

    forgetThreads: function() {
      VorDevtools.threads = new Map();   // thread id -> track name
      VorDevtools.trackOwner = new Map(); // track name -> thread id (names must stay unique)
    },

    // ---- Names ------------------------------------------------------------------------------

    /** @param {string} name @returns {string} */
    colorOf: function(name) {
      var h = 0x811c9dc5;
      for (var i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
      return VorDevtools.PALETTE[(h >>> 0) % VorDevtools.PALETTE.length];
    },

    /** @param {string} group */
    setGroup: function(group) {
      VorDevtools.group = group;
      VorDevtools.groupArg = group.length ? group : undefined;
      var sites = VorDevtools.sites;
      for (var i = 0; i < sites.length; i++) if (sites[i]) VorDevtools.setDetailGroup(/** @type {VorDevtoolsSite} */ (sites[i]).detail.devtools);
    },

    /** @param {VorDevtoolsDetail} devtools */
    setDetailGroup: function(devtools) {
      if (VorDevtools.groupArg === undefined) delete devtools.trackGroup;
      else devtools.trackGroup = VorDevtools.groupArg;
    },

    /** @param {number} id @param {string} name @param {string} file @param {number} line */
    addSite: function(id, name, file, line) {
      if (id <= 0 || id >= VorDevtools.SITE_LIMIT) return;
      // The full path in the details, the file's base name in the tooltip (a shorter detail also
      // costs less to clone and to trace).
      var location = file ? file + ':' + line : '';
      /** @type {[string, string]} */
      var frameProp = ['frame', ''];
      /** @type {VorDevtoolsDetail} */
      var devtools = {
        dataType: 'track-entry', track: '', color: VorDevtools.colorOf(name),
        properties: location ? [['location', location], frameProp] : [frameProp],
        tooltipText: location ? name + ' (' + file.slice(file.lastIndexOf('/') + 1) + ':' + line + ')' : name,
      };
      VorDevtools.setDetailGroup(devtools);
      VorDevtools.sites[id] = {
        name: name, measureName: name + VorDevtools.NAME_SUFFIX, location: location, color: devtools.color, frameProp: frameProp,
        detail: { devtools: devtools }, stamp: 0,
      };
    },

    /** @param {number} tid @param {string} name @returns {string} the thread's track */
    addThread: function(tid, name) {
      var old = VorDevtools.threads.get(tid);
      if (old !== undefined && VorDevtools.trackOwner.get(old) === tid) VorDevtools.trackOwner.delete(old);
      var track = name || 'thread ' + tid;
      var owner = VorDevtools.trackOwner.get(track);
      if (track === VorDevtools.FRAMES_TRACK || (owner !== undefined && owner !== tid)) track += ' (' + tid + ')';
      VorDevtools.threads.set(tid, track);
      VorDevtools.trackOwner.set(track, tid);
      return track;
    },

    // Reads the declarations of the descriptor (offsets: browser_sink.c, sink_frame_desc).
    /** @param {number} desc */
    declare: function(desc) {
      var U = HEAPU32;
      var n = U[(desc + 96) >> 2], p = U[(desc + 100) >> 2];
      for (var i = 0; i < n; i++) {
        var q = (p >> 2) + i * 5; // sink_site_decl: id, line, name, file, name_bytes
        var filePtr = U[q + 3];
        VorDevtools.addSite(U[q], UTF8ToString(U[q + 2], U[q + 4]), filePtr ? UTF8ToString(filePtr, 4096) : '', U[q + 1]);
      }
      n = U[(desc + 104) >> 2]; p = U[(desc + 108) >> 2];
      for (i = 0; i < n; i++) { // sink_thread_decl: id, char name[64]
        var t = p + i * 68;
        VorDevtools.addThread(U[t >> 2], UTF8ToString(t + 4, 64));
      }
      n = U[(desc + 112) >> 2]; p = U[(desc + 116) >> 2];
      for (i = 0; i < n; i++) { // sink_column_decl: id, name, unit
        var c = (p >> 2) + i * 3;
        if (U[c] < VorDevtools.COLUMN_LIMIT) VorDevtools.columns[U[c]] = { name: UTF8ToString(U[c + 1]), unit: UTF8ToString(U[c + 2]) };
      }
    },

    // ---- Frames -----------------------------------------------------------------------------

    /** @param {number} mode @returns {string | null} */
    missingApi: function(mode) {
      if (mode === 2) {
        if (typeof console !== 'object' || typeof console.timeStamp !== 'function') return 'console.timeStamp is missing (FAST mode)';
        return null;
      }
      if (typeof performance !== 'object' || typeof performance.measure !== 'function' ||
          typeof performance.mark !== 'function' || typeof performance.clearMeasures !== 'function' ||
          typeof performance.clearMarks !== 'function') return 'performance.measure is missing (USER_TIMING mode)';
      return null;
    },

    // The session epoch on this realm's performance.now() timeline, in ms (the C side has
    // already taken off a worker's time-origin difference: browser_sink.c).
    /** @param {number} desc @returns {number} */
    epochMs: function(desc) {
      return HEAPF64[desc >> 3];
    },

    /** @param {unknown} v @param {string} unit @returns {string} */
    formatValue: function(v, unit) {
      var text = typeof v === 'number' && isFinite(v) ? String(+v.toPrecision(6)) : String(v);
      return unit ? text + ' ' + unit : text;
    },

    // The clock's step for people: '5 µs', '100 µs', '' when unknown.
    /** @param {number} ns @returns {string} */
    stepText: function(ns) {
      if (!(ns > 0)) return '';
      return ns >= 1e6 ? VorDevtools.formatValue(ns / 1e6, 'ms') : VorDevtools.formatValue(ns / 1e3, 'µs');
    },

    // 'clock' property of frame entries: the step performance.now() moves in, and why.
    /** @param {number} desc @returns {string} */
    clockText: function(desc) {
      var F = HEAPF64, S = HEAP32;
      var step = VorDevtools.stepText(F[(desc + 152) >> 3]);
      var isolated = S[(desc + 176) >> 2];
      var why = isolated === 1 ? 'cross-origin isolated' : isolated === 0 ? 'not cross-origin isolated: see vor\'s README, Timer resolution' : '';
      if (!step) return why ? 'step unknown (' + why + ')' : 'step unknown';
      return step + ' steps' + (why ? ' (' + why + ')' : '');
    },

    // The frame entry's properties: the frame's counts, what was left out, the clock, and every
    // metric value it carries.
    /** @param {number} desc @param {string} frameStr @returns {[string, string][]} */
    frameProperties: function(desc, frameStr) {
      var V = VorDevtools, U = HEAPU32, F = HEAPF64;
      /** @type {[string, string][]} */
      var props = [['frame', frameStr], ['scopes', String(F[(desc + 40) >> 3])]];
      var dropped = F[(desc + 48) >> 3];
      if (dropped > 0) props.push(['dropped scopes', String(dropped)]);
      var budgetOut = F[(desc + 136) >> 3], shortOut = F[(desc + 144) >> 3];
      if (budgetOut > 0) props.push(['left out (entry budget ' + U[(desc + 180) >> 2] + ')', String(budgetOut)]);
      if (shortOut > 0) props.push(['left out (under ' + V.stepText(F[(desc + 32) >> 3]) + ')', String(shortOut)]);
      props.push(['clock', V.clockText(desc)]);
      props.push(['zero-length scopes drawn', V.stepText(F[(desc + 160) >> 3]) + ' wide']);
      for (var part = 0; part < 2; part++) {
        var n = U[(desc + 80 + part * 8) >> 2], p = U[(desc + 84 + part * 8) >> 2];
        for (var i = 0; i < n; i++) { // vor_user_value: column id, reserved, double value
          var column = V.columns[U[(p >> 2) + i * 4]];
          if (column) props.push([column.name, V.formatValue(F[(p >> 3) + i * 2 + 1], column.unit)]);
        }
      }
      props.push(['vor overhead', V.formatValue(F[(desc + 56) >> 3] / 1000, 'µs')]);
      return props;
    },

    // The frame entry's tooltip: its length, and what the budget left out.
    /** @param {number} desc @param {string} frameName @returns {string} */
    frameTooltip: function(desc, frameName) {
      var F = HEAPF64;
      var text = frameName + ': ' + VorDevtools.formatValue(F[(desc + 16) >> 3] / 1e6, 'ms');
      var budgetOut = F[(desc + 136) >> 3];
      return budgetOut > 0 ? text + ' (' + budgetOut + ' scopes left out by the entry budget)' : text;
    },

    // Track names of the frame's threads, by their index in the frame record.
    /** @param {number} desc @returns {string[]} */
    frameTracks: function(desc) {
      var V = VorDevtools, U = HEAPU32, tracks = V.trackOfIndex;
      var nThreads = U[(desc + 72) >> 2], threadsW = U[(desc + 76) >> 2] >> 2;
      tracks.length = nThreads;
      for (var t = 0; t < nThreads; t++) { // vor_thread_record: thread id, n scopes, scopes, n open
        var tid = U[threadsW + t * 4];
        var track = V.threads.get(tid);
        tracks[t] = track === undefined ? V.addThread(tid, '') : track;
      }
      return tracks;
    },

    /** @param {number} desc */
    emitUserTiming: function(desc) {
      var V = VorDevtools, U = HEAPU32, F = HEAPF64;
      var base = V.epochMs(desc);
      var frameStartNs = F[(desc + 8) >> 3], frameDurNs = F[(desc + 16) >> 3];
      var frameStr = String(F[(desc + 24) >> 3]);
      var perf = performance, opts = V.opts, sites = V.sites, used = V.used;
      var serial = ++V.serial;
      var frameStart = base + frameStartNs / 1e6, frameEnd = base + (frameStartNs + frameDurNs) / 1e6;
      var tracks = V.frameTracks(desc);
      var n = U[(desc + 172) >> 2], w = U[(desc + 168) >> 2] >> 2;
      used.length = 0;
      try {
        perf.mark(V.frameMark, { startTime: frameStart, detail: { frame: frameStr } });
        for (var i = 0; i < n; i++, w += 6) { // devtools_entry: site, thread index, f64 start, f64 end (ns)
          var site = sites[U[w]];
          if (site === undefined) continue;
          site.detail.devtools.track = tracks[U[w + 1]];
          site.frameProp[1] = frameStr;
          opts.start = base + F[(w >> 1) + 1] / 1e6;
          opts.end = base + F[(w >> 1) + 2] / 1e6;
          opts.detail = site.detail;
          perf.measure(site.measureName, opts);
          if (site.stamp !== serial) { site.stamp = serial; used.push(site.measureName); }
        }
        var frameName = 'frame ' + frameStr;
        /** @type {VorDevtoolsDetail} */
        var devtools = {
          dataType: 'track-entry', track: V.FRAMES_TRACK, color: V.FRAME_COLORS[serial & 1],
          properties: V.frameProperties(desc, frameStr),
          tooltipText: V.frameTooltip(desc, frameName),
        };
        V.setDetailGroup(devtools);
        used.push(frameName + V.NAME_SUFFIX);
        perf.measure(frameName + V.NAME_SUFFIX, { start: frameStart, end: frameEnd, detail: { devtools: devtools } });
      } finally {
        for (var k = 0; k < used.length; k++) perf.clearMeasures(used[k]);
        perf.clearMarks(V.frameMark);
        used.length = 0;
      }
    },

    // Fast mode's frame entry has no properties; its 7th argument (a JSON string, which Chromium
    // records as it is and DevTools shows as the entry's data) carries them instead.
    /** @param {number} desc */
    emitFast: function(desc) {
      var V = VorDevtools, U = HEAPU32, F = HEAPF64;
      var base = V.epochMs(desc);
      var frameStartNs = F[(desc + 8) >> 3], frameDurNs = F[(desc + 16) >> 3];
      var frameStr = String(F[(desc + 24) >> 3]);
      var sites = V.sites, group = V.groupArg, serial = ++V.serial;
      var tracks = V.frameTracks(desc);
      var n = U[(desc + 172) >> 2], w = U[(desc + 168) >> 2] >> 2;
      for (var i = 0; i < n; i++, w += 6) {
        var site = sites[U[w]];
        if (site === undefined) continue;
        console.timeStamp(site.name, base + F[(w >> 1) + 1] / 1e6, base + F[(w >> 1) + 2] / 1e6, tracks[U[w + 1]], group, site.color);
      }
      /** @type {Record<string, string>} */
      var data = {};
      var props = V.frameProperties(desc, frameStr);
      for (var k = 0; k < props.length; k++) data[props[k][0]] = props[k][1];
      console.timeStamp('frame ' + frameStr, base + frameStartNs / 1e6, base + (frameStartNs + frameDurNs) / 1e6,
        V.FRAMES_TRACK, group, V.FRAME_COLORS[serial & 1], JSON.stringify(data));
    },

    // Once per realm, when a session starts on a page that is not cross-origin isolated.
    /** @param {number} isolated 1, 0, or -1 (unknown) @param {number} stepNs */
    clockWarning: function(isolated, stepNs) {
      var V = VorDevtools;
      if (isolated !== 0 || V.warnedClock || !V.inBrowser() || typeof console !== 'object') return;
      V.warnedClock = true;
      var step = V.stepText(stepNs) || '100 µs';
      console.warn('vor: performance.now() moves in ' + step + ' steps on this page because it is not cross-origin ' +
        'isolated, so scopes shorter than that measure 0. For 5 µs steps, serve the page with the headers ' +
        '"Cross-Origin-Opener-Policy: same-origin" and "Cross-Origin-Embedder-Policy: require-corp" ' +
        '(vor serve sends them; see vor\'s README, "Timer resolution").');
    },

    /** @param {number} desc @returns {number} 0, or 1 with the message written (fail) */
    frame: function(desc) {
      var V = VorDevtools, U = HEAPU32;
      try {
        if (!V.shared) V.adopt(U[(desc + 132) >> 2]);
        var flags = U[(desc + 64) >> 2];
        if (flags & 2) V.reset();
        if (flags & 8) V.forgetThreads();
        if (flags & 4) V.setGroup(UTF8ToString(U[(desc + 120) >> 2], 64));
        V.declare(desc);
        if (!(flags & 1)) return 0;
        var mode = U[(desc + 68) >> 2];
        var missing = V.missingApi(mode);
        if (missing) {
          V.fail(desc, missing);
          return 1;
        }
        if (mode === 2) V.emitFast(desc);
        else V.emitUserTiming(desc);
        return 0;
      } catch (e) {
        V.fail(desc, 'the browser threw: ' + (e && e.message ? e.message : String(e)));
        return 1;
      }
    },

    /** @param {number} desc @param {string} message */
    fail: function(desc, message) {
      var ptr = HEAPU32[(desc + 124) >> 2], cap = HEAPU32[(desc + 128) >> 2];
      if (ptr && cap) stringToUTF8(message, ptr, cap);
    },

    // ---- Module.vorDevtools: settings from the page -----------------------------------------
    // page_settings_t (browser_sink.c): int32 lock, pending, mode (-1: none), mode_in_effect (-1: no
    // frame yet), double min_ns, int32 has_min, has_group, char group[64], int32 has_budget, u32 budget.

    /** @param {number} ptr */
    adopt: function(ptr) {
      var V = VorDevtools;
      if (!ptr || V.shared) return;
      V.shared = ptr;
      var e = V.early;
      V.early = { mode: -1, minNs: null, group: null, budget: null };
      if (e.mode >= 0 || e.minNs !== null || e.group !== null || e.budget !== null) V.request(e.mode, e.minNs, e.group, e.budget);
    },

    // Runs `body` (reading or writing page_settings_t at word index w) under its lock. The
    // frame thread holds it for a few loads and stores, so spinning is brief.
    /**
     * @template T
     * @param {(w: number) => T} body
     * @returns {T}
     */
    locked: function(body) {
      var w = VorDevtools.shared >> 2;
      while (Atomics.compareExchange(HEAP32, w, 0, 1) !== 0) { /* spin: held for a few loads and stores */ }
      try { return body(w); } finally { Atomics.store(HEAP32, w, 0); }
    },

    // A request for the frame thread's next frame (mode -1, minNs, group and budget null: unchanged).
    /** @param {number} mode @param {number | null} minNs @param {string | null} group @param {number | null} [budget] */
    request: function(mode, minNs, group, budget) {
      var V = VorDevtools;
      if (budget === undefined) budget = null;
      if (!V.shared) {
        if (mode >= 0) V.early.mode = mode;
        if (minNs !== null) V.early.minNs = minNs;
        if (group !== null) V.early.group = group;
        if (budget !== null) V.early.budget = budget;
        return;
      }
      V.locked(function(/** @type {number} */ w) {
        if (mode >= 0) HEAP32[w + 2] = mode;
        if (minNs !== null) { HEAPF64[(V.shared + 16) >> 3] = minNs; HEAP32[w + 6] = 1; }
        if (group !== null) { stringToUTF8(group, V.shared + 32, 64); HEAP32[w + 7] = 1; }
        if (budget !== null) { HEAPU32[w + 25] = budget; HEAP32[w + 24] = 1; }
        Atomics.store(HEAP32, w + 1, 1);
      });
    },

    /** @param {unknown} mode a name or 0..2 */
    apiSetMode: function(mode) {
      var v = typeof mode === 'number' ? mode : VorDevtools.MODE_NAMES.indexOf(String(mode).toLowerCase().replace('_', '-'));
      if (!(v >= 0 && v <= 2) || (v | 0) !== v) throw new RangeError("vorDevtools.setMode: 'off', 'user-timing' or 'fast' (got " + mode + ')');
      VorDevtools.request(v, null, null);
    },

    /** @returns {string} */
    apiGetMode: function() {
      var V = VorDevtools;
      var m = V.shared ? V.locked(function(/** @type {number} */ w) {
        return HEAP32[w + 2] >= 0 ? HEAP32[w + 2] : HEAP32[w + 3];
      }) : V.early.mode;
      return V.MODE_NAMES[m >= 0 && m <= 2 ? m : V.defaultMode];
    },

    /** @param {unknown} group */
    apiSetTrackGroup: function(group) {
      if (typeof group !== 'string') throw new TypeError('vorDevtools.setTrackGroup: a string');
      VorDevtools.request(-1, null, group);
    },

    /** @param {unknown} ms */
    apiSetMinDurationMs: function(ms) {
      if (typeof ms !== 'number' || !(ms >= 0) || !isFinite(ms)) throw new RangeError('vorDevtools.setMinDurationMs: a finite number >= 0');
      // At most 2^64 ns, which C saturates to UINT64_MAX (every scope left out).
      VorDevtools.request(-1, Math.min(Math.round(ms * 1e6), 18446744073709551616), null);
    },

    /** @param {unknown} entries */
    apiSetEntryBudget: function(entries) {
      if (typeof entries !== 'number' || !(entries >= 0) || entries > 4294967295 || Math.floor(entries) !== entries)
        throw new RangeError('vorDevtools.setEntryBudget: a whole number of entries per frame, 0 (no limit) to 4294967295');
      VorDevtools.request(-1, null, null, entries >>> 0);
    },
  },

  vor_devtools_js_clock__deps: ['$VorDevtools'],
  /** @param {number} isolated @param {number} stepNs */
  vor_devtools_js_clock: function(isolated, stepNs) {
    VorDevtools.clockWarning(isolated, stepNs);
  },

  vor_devtools_js_environment__deps: ['$VorDevtools'],
  vor_devtools_js_environment: function() {
    return VorDevtools.inBrowser() ? 1 : 0;
  },

  vor_devtools_js_settings__deps: ['$VorDevtools'],
  /** @param {number} ptr */
  vor_devtools_js_settings: function(ptr) {
    VorDevtools.adopt(ptr);
  },

  vor_devtools_js_frame__deps: ['$VorDevtools'],
  /** @param {number} desc */
  vor_devtools_js_frame: function(desc) {
    return VorDevtools.frame(desc);
  },

};

mergeInto(LibraryManager.library, LibraryVorDevtools);
