// @ts-check
// panel_bridge.js (--js-library): where wasm/src/panel_bridge.c hands declarations and
// frame views to the page. The page sets Module.vorPanelSource to the object returned by
// createInPageSource(panel) (web/embed.js); without it, the C side sends nothing.
//
// Never throws into C: a source that throws (or is not an object with the two methods) is
// caught here, and C is told so (1, with the message in `error`) and reports it once
// through vor's logger; 0 when the source took the call (whatever it returned: a source
// that rejects bad declarations says so itself), 2 when there is no source.
mergeInto(LibraryManager.library, {
  $VorPanelBridge: {
    /**
     * @param {'pushDeclarations' | 'pushFrame'} method @param {string | Uint8Array} arg
     * @param {number} errorPtr @param {number} errorCapacity
     * @returns {number}
     */
    call: function (method, arg, errorPtr, errorCapacity) {
      var source = Module['vorPanelSource'];
      if (!source) return 2;
      try {
        source[method](arg);
        return 0;
      } catch (e) {
        var message = e && e.message ? e.message : String(e);
        if (errorPtr && errorCapacity) stringToUTF8(message, errorPtr, errorCapacity);
        return 1;
      }
    },
  },
  vor_js_panel_has_source: function () {
    return Module['vorPanelSource'] ? 1 : 0;
  },
  vor_js_panel_declarations__deps: ['$VorPanelBridge'],
  /** @param {number} jsonPtr @param {number} errorPtr @param {number} errorCapacity */
  vor_js_panel_declarations: function (jsonPtr, errorPtr, errorCapacity) {
    return VorPanelBridge.call('pushDeclarations', UTF8ToString(jsonPtr), errorPtr, errorCapacity);
  },
  vor_js_panel_frame__deps: ['$VorPanelBridge'],
  /** @param {number} ptr @param {number} size @param {number} errorPtr @param {number} errorCapacity */
  vor_js_panel_frame: function (ptr, size, errorPtr, errorCapacity) {
    // pushFrame copies the bytes before returning, so a view into HEAPU8 is safe.
    return VorPanelBridge.call('pushFrame', HEAPU8.subarray(ptr, ptr + size), errorPtr, errorCapacity);
  },
});
