// @ts-check
// function_names.js: names the functions that -finstrument-functions reports in the wasm build.
//
// A wasm function pointer is an index into the function table; the table's entry is an exported
// wasm function whose `name` is its function index (a decimal string, per the WebAssembly JS API),
// and the module's "name" custom section maps function indices to names. That section is there
// when the program is linked with --profiling-funcs (or -g2); the module itself is known in
// pthreads builds (wasmModule) or when wasm/prejs/module_capture.js kept it. Without either,
// functions are named "wasm-function[INDEX]", as V8's stack traces and --emit-symbol-map name
// them. Called once per function, from the frame thread, off the hot path.
mergeInto(LibraryManager.library, {
  $VorFunctionNames: {
    /** @type {Map<number, string> | null} */
    names: null, // Map function index -> name once the module is known (empty without a name section)

    /** @returns {WebAssembly.Module | null} */
    module: function() {
      if (typeof wasmModule !== 'undefined' && wasmModule) return wasmModule;
      return Module['vorWasmModule'] || null;
    },

    // The "name" section's function names (subsection 1: vec(function index, name)).
    /** @param {WebAssembly.Module} module @returns {Map<number, string>} */
    parse: function(module) {
      var names = new Map();
      var sections = WebAssembly.Module.customSections(module, 'name');
      if (!sections.length) return names;
      var b = new Uint8Array(sections[0]), p = 0;
      var leb = function() {
        var result = 0, shift = 0, c;
        do { c = b[p++]; result += (c & 0x7f) * Math.pow(2, shift); shift += 7; } while ((c & 0x80) && p < b.length);
        return result;
      };
      var decoder = new TextDecoder();
      while (p < b.length) {
        var id = b[p++], size = leb(), end = p + size;
        if (id === 1) {
          for (var n = leb(); n > 0 && p < end; n--) {
            var index = leb(), length = leb();
            // Emscripten (3.1.6) makes the section's names unique by appending ".1", ".2", ... to the
            // second and later functions of one name (static functions of the same name in
            // several files, a header's static inline helpers): C and C++ names have no "."
            // of their own, so the source name is what precedes it, as natively.
            names.set(index, decoder.decode(b.subarray(p, p + length)).replace(/\.\d+$/, ''));
            p += length;
          }
        }
        p = end;
      }
      return names;
    },

    /** @param {number} pointer @returns {string} */
    name: function(pointer) {
      var f = null;
      try { f = wasmTable.get(pointer); } catch (e) { /* out of the table */ }
      if (!f) return 'table[' + pointer + ']';
      var index = Number(f.name);
      if (!(index >= 0) || String(index) !== f.name) return f.name || 'table[' + pointer + ']'; // a JS function (addFunction)
      if (VorFunctionNames.names === null) {
        var module = VorFunctionNames.module();
        if (!module) return 'wasm-function[' + index + ']'; // not known (yet): nothing cached
        try { VorFunctionNames.names = VorFunctionNames.parse(module); } catch (e) { VorFunctionNames.names = new Map(); }
      }
      return VorFunctionNames.names.get(index) || 'wasm-function[' + index + ']';
    },
  },

  // Writes the name of the function at table index `pointer` into buf (cap bytes, NUL-terminated).
  vor_wasm_function_name__deps: ['$VorFunctionNames'],
  /** @param {number} pointer @param {number} buf @param {number} cap */
  vor_wasm_function_name: function(pointer, buf, cap) {
    var name;
    try { name = VorFunctionNames.name(pointer); } catch (e) { name = 'table[' + pointer + ']'; }
    stringToUTF8(name, buf, cap);
  },
});
