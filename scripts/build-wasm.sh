#!/bin/sh
# Builds the WebAssembly flavour into build/wasm (core, wasm glue, examples) with
# Debian's Emscripten 3.1.6. Debian's emcc needs Debian's acorn module at -O1 and above
# (NODE_PATH: node from elsewhere does not look in /usr/share/nodejs), and emcmake's
# default test emulator flag is rejected by node 20.
set -eu
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
export NODE_PATH=/usr/share/nodejs
mkdir -p build
sh scripts/fetch-lz4-source.sh
emcmake cmake --preset wasm > build/wasm-configure.log 2>&1 \
    || { cat build/wasm-configure.log; exit 1; }
cmake --build build/wasm -j "$JOBS"
