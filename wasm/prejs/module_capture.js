// module_capture.js (--pre-js): keeps the WebAssembly.Module this program is instantiated from,
// so that vor can read its "name" section and name the functions of a -finstrument-functions
// build (wasm/js/function_names.js). Emscripten 3.1.6 keeps the module only in pthreads builds.
//
// The glue's own instantiation is recognised by its import object (it holds asmLibraryArg);
// every other call passes through untouched, and the originals are put back once the module is
// known. Covers instantiateStreaming (pages), instantiate (bytes or a module) and the synchronous
// `new WebAssembly.Instance` (node builds with -sWASM_ASYNC_COMPILATION=0, pthread workers).
(function() {
  if (typeof WebAssembly !== 'object') return;
  var WA = WebAssembly, instantiate = WA.instantiate, streaming = WA.instantiateStreaming, Instance = WA.Instance;
  var ours = function(imports) {
    try { for (var key in imports) if (typeof asmLibraryArg !== 'undefined' && imports[key] === asmLibraryArg) return true; } catch (e) {}
    return false;
  };
  var keep = function(module) {
    if (module instanceof WA.Module) Module['vorWasmModule'] = module;
    WA.instantiate = instantiate;
    if (streaming) WA.instantiateStreaming = streaming;
    WA.Instance = Instance;
  };
  WA.instantiate = function(source, imports) {
    var result = instantiate.apply(this, arguments);
    if (!ours(imports)) return result;
    return result.then(function(r) { keep(r.module || source); return r; });
  };
  if (streaming) {
    WA.instantiateStreaming = function(source, imports) {
      var result = streaming.apply(this, arguments);
      return ours(imports) ? result.then(function(r) { keep(r.module); return r; }) : result;
    };
  }
  WA.Instance = new Proxy(Instance, {
    construct: function(target, args, newTarget) {
      if (ours(args[1])) keep(args[0]);
      return Reflect.construct(target, args, newTarget);
    },
  });
})();
