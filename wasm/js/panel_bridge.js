// panel_bridge.js (--js-library): where wasm/src/panel_bridge.c hands declarations and
// frame views to the page. The page sets Module.vorPanelSource to the object returned by
// createInPageSource(panel) (web/embed.js); without it, the calls do nothing.
mergeInto(LibraryManager.library, {
  vor_js_panel_declarations: function (jsonPtr) {
    var source = Module['vorPanelSource'];
    if (source) source.pushDeclarations(UTF8ToString(jsonPtr));
  },
  vor_js_panel_frame: function (ptr, size) {
    var source = Module['vorPanelSource'];
    // pushFrame copies the bytes before returning, so a view into HEAPU8 is safe.
    if (source) source.pushFrame(HEAPU8.subarray(ptr, ptr + size));
  },
});
