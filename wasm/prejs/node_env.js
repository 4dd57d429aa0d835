// node_env.js (--pre-js for programs run under node): Emscripten's getenv() does not see
// the real environment, so copy the VOR_* variables in before main() runs. This is what
// makes VOR_RECORD and VOR_TRACE work under node as they do natively (with NODERAWFS the
// files are real files).
if (typeof process === 'object' && process.env) {
  Module['preRun'] = Module['preRun'] || [];
  Module['preRun'].push(function () {
    for (var key in process.env) {
      if (key.indexOf('VOR_') === 0) ENV[key] = process.env[key];
    }
  });
}
