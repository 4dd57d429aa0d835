// @ts-check
// upload.js: the page's side of a live upload to a profile store (vor serve --store), for
// wasm/src/upload_wasm.c. Module.vorUpload(url, {project, tags: {k: 'v'}, token, name, flame,
// every, maxFrames}) starts it after vor_enable() (flame, every, maxFrames: what VOR_RECORD_FLAME,
// _EVERY, _MAX_FRAMES say natively); it returns true, or false with the reason on the console. The
// C side hands over the capture's header once and then each record as the frame ends.
//
// The protocol is the one `vor upload` speaks (native/server/ws_upload.c): a hello, the server's
// offset, the capture's bytes from there, acks. Bytes the server has not acknowledged are kept
// here (up to the upload's buffer size, 16 MiB by default): a dropped connection is re-made with
// back-off (0.25 s doubling to 10 s) and the upload resumes from the offset the server holds,
// nothing lost. A record that does not fit (the server slow or unreachable for long) is refused to
// C, which leaves that frame out and counts it. A refusal by the server (a bad token, a foreign
// origin, the store full) is final: one console warning, and the upload stops.
// Sending is WebSocket.send: it never blocks the page; what is sent is copied out of wasm memory.

var LibraryVorUpload = {
  $VorUpload__postset: 'VorUpload.init();',
  $VorUpload__deps: ['vor_upload_start_js'],
  $VorUpload: {
    init: function() {
      VorUpload.s = null;
      Module['vorUpload'] = VorUpload.start;
      // A page that goes away ends its upload: what is sent, then "finish", so the store keeps the
      // capture as cut (its end record never comes) rather than open for a resume that never comes.
      if (typeof addEventListener === 'function') {
        addEventListener('pagehide', function() {
          var s = VorUpload.s;
          if (!s || s.failed || s.done) return;
          s.ending = true;
          VorUpload.pump();
        });
      }
    },

    /**
     * Module.vorUpload(url, options)
     * @param {string} url @param {VorUploadOptions} [options] @returns {boolean}
     */
    start: function(url, options) {
      options = options || {};
      /** @type {string[]} */
      var tags = [];
      var t = options['tags'] || {};
      for (var k in t) {
        var v = String(t[k]);
        if (!k || k.indexOf('=') >= 0 || k.indexOf(',') >= 0 || v.indexOf(',') >= 0) {
          console.warn('vor: vorUpload: tag ' + JSON.stringify(k) + ': keys without "=" or ",", values without ","');
          return false;
        }
        tags.push(k + '=' + v);
      }
      // every, maxFrames: whole numbers >= 1 (0: not given).
      /** @type {string | null} */
      var bad = null;
      var opts = options;
      /** @param {'every' | 'maxFrames'} key @returns {number} */
      var count = function(key) {
        var n = opts[key];
        if (n === undefined || n === null) return 0;
        if (typeof n !== 'number' || !(n >= 1) || Math.floor(n) !== n) bad = key;
        return bad ? 0 : n;
      };
      count('every'); count('maxFrames');
      if (bad) {
        console.warn('vor: vorUpload: ' + bad + ' must be a whole number >= 1');
        return false;
      }
      var strings = [String(url), options['project'] || '', tags.join(','), options['token'] || '', options['name'] || ''];
      for (var i = 0; i < strings.length; i++) {
        if (lengthBytesUTF8(String(strings[i])) > 4096) {
          console.warn('vor: vorUpload: the url, project, tags, token and name must be under 4 KiB each');
          return false;
        }
      }
      // The strings live on the C stack for the call only (the C side copies them).
      var sp = stackSave(), ok;
      try {
        var ptrs = strings.map(function(s) { return allocateUTF8OnStack(String(s)); });
        ok = _vor_upload_start_js(ptrs[0], ptrs[1], ptrs[2], ptrs[3], ptrs[4], options['flame'] ? 1 : 0,
                                  count('every'), count('maxFrames'));
      } finally {
        stackRestore(sp);
      }
      return !!ok;
    },

    /** @param {string} url @returns {string} */
    socketUrl: function(url) {
      var u = url.replace(/^http:/, 'ws:').replace(/^https:/, 'wss:').replace(/\/+$/, '');
      return /\/upload$/.test(u) ? u : u + '/upload';
    },

    connect: function() {
      var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
      if (!s || s.failed || s.done) return;
      /** @type {WebSocket} */
      var ws;
      try {
        ws = new WebSocket(s.url, 'vor-upload');
      } catch (e) {
        VorUpload.fail('cannot open ' + s.url + ': ' + e.message);
        return;
      }
      ws.binaryType = 'arraybuffer';
      s.ws = ws;
      s.ready = false;
      ws.onopen = function() { ws.send(s.hello); };
      ws.onmessage = function(ev) {
        if (typeof ev.data !== 'string') return;
        var m;
        try { m = JSON.parse(ev.data); } catch (e) { return; }
        if (m.type === 'offset') VorUpload.resume(m.bytes);
        else if (m.type === 'ack') VorUpload.acked(m.bytes);
        else if (m.type === 'done') { VorUpload.acked(m.bytes); s.done = true; }
        else if (m.type === 'error') VorUpload.fail(m.message);
      };
      ws.onclose = function() {
        s.ws = null;
        s.ready = false;
        if (s.failed || s.done) return;
        if (!s.warned) {
          s.warned = true;
          console.warn('vor: the upload to ' + s.url + ' lost its connection; retrying (frames wait in the page)');
        }
        s.reconnects++;
        setTimeout(VorUpload.connect, s.backoff);
        s.backoff = Math.min(s.backoff * 2, 10000);
      };
    },

    /** @param {string} why */
    fail: function(why) {
      var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
      if (!s || s.failed) return;
      s.failed = true;
      console.warn('vor: the upload to ' + s.url + ' was refused: ' + why + ' (uploading stops; the page runs on)');
      if (s.ws) s.ws.close(1000);
    },

    // The server holds `n` bytes: send from there, if what follows is still here.
    /** @param {number} n */
    resume: function(n) {
      var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
      var floor = s.chunks.length ? s.chunks[0].start : s.head;
      if (n > s.head || (n >= s.header.length && n < floor) || (n < s.header.length && floor > s.header.length)) {
        VorUpload.fail('the server no longer holds what this page already let go of');
        return;
      }
      s.backoff = 250;
      s.ready = true;
      s.sent = n;
      VorUpload.acked(n);
      VorUpload.pump();
    },

    /** @param {number} n */
    acked: function(n) {
      var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
      if (n > s.acked) s.acked = n;
      while (s.chunks.length && s.chunks[0].start + s.chunks[0].bytes.length <= s.acked) {
        s.kept -= s.chunks[0].bytes.length;
        s.chunks.shift();
      }
    },

    pump: function() {
      var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
      if (!s.ws || !s.ready) return;
      if (s.sent < s.header.length) {
        s.ws.send(s.header.subarray(s.sent));
        s.sent = s.header.length;
      }
      for (var i = 0; i < s.chunks.length && s.sent < s.head; i++) {
        var c = s.chunks[i], end = c.start + c.bytes.length;
        if (end <= s.sent) continue;
        s.ws.send(c.bytes.subarray(s.sent - c.start));
        s.sent = end;
      }
      if (s.ending && s.sent === s.head && !s.finishSent) {
        s.finishSent = true;
        s.ws.send('{"type":"finish"}');
      }
    },
  },

  vor_upload_js_start__deps: ['$VorUpload'],
  /**
   * @param {number} url @param {number} hello @param {number} header @param {number} headerLen
   * @param {number} bufferBytes @returns {number}
   */
  vor_upload_js_start: function(url, hello, header, headerLen, bufferBytes) {
    if (typeof WebSocket === 'undefined') {
      console.warn('vor: vorUpload: this environment has no WebSocket');
      return 0;
    }
    VorUpload.s = {
      url: VorUpload.socketUrl(UTF8ToString(url)), hello: UTF8ToString(hello),
      header: HEAPU8.slice(header, header + headerLen), chunks: [], kept: 0, budget: bufferBytes,
      head: headerLen, sent: 0, acked: 0, ws: null, ready: false, failed: false, done: false, ending: false,
      finishSent: false, backoff: 250, reconnects: 0, warned: false,
    };
    VorUpload.connect();
    return 1;
  },

  vor_upload_js_send__deps: ['$VorUpload'],
  /** @param {number} ptr @param {number} n @returns {number} */
  vor_upload_js_send: function(ptr, n) {
    var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
    if (!s || s.failed) return 0;
    if (s.kept + n > s.budget) return 0;
    s.chunks.push({ start: s.head, bytes: HEAPU8.slice(ptr, ptr + n) });
    s.kept += n;
    s.head += n;
    VorUpload.pump();
    return 1;
  },

  vor_upload_js_end__deps: ['$VorUpload'],
  vor_upload_js_end: function() {
    var s = /** @type {VorUploadState} */ (VorUpload.s); // null checked where it can be
    if (!s) return;
    s.ending = true;
    VorUpload.pump();
  },

  vor_upload_js_failed__deps: ['$VorUpload'],
  vor_upload_js_failed: function() { return VorUpload.s && VorUpload.s.failed ? 1 : 0; },

  vor_upload_js_acked__deps: ['$VorUpload'],
  vor_upload_js_acked: function() { return VorUpload.s ? VorUpload.s.acked : 0; },

  vor_upload_js_connected__deps: ['$VorUpload'],
  vor_upload_js_connected: function() { return VorUpload.s && VorUpload.s.ready ? 1 : 0; },
};

mergeInto(LibraryManager.library, LibraryVorUpload);
