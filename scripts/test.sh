#!/bin/sh
# `make test`: builds every flavour and runs every test. Order: the wasm build, the
# C tests under ASan+UBSan, the thread tests under TSan, then the full native suite
# (C, node, headless Chromium) last, so ctest's closing lines end the output. The configure
# lines are CMakePresets.json's presets (native, wasm, asan, tsan).
set -eu
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
mkdir -p build

echo "== native build"
cmake --preset native > build/native-configure.log 2>&1 \
    || { cat build/native-configure.log; exit 1; }
cmake --build build/native -j "$JOBS"

echo "== wasm build (the core and examples compiled with emcc)"
sh scripts/build-wasm.sh

echo "== C tests and the fuzz smoke runs under AddressSanitizer + UndefinedBehaviorSanitizer (clang-14)"
cmake --preset asan > build/asan-configure.log 2>&1 || { cat build/asan-configure.log; exit 1; }
cmake --build build/asan -j "$JOBS"
(cd build/asan && ctest -LE js --output-on-failure -j "$JOBS")

echo "== thread tests under ThreadSanitizer (clang-14)"
cmake --preset tsan > build/tsan-configure.log 2>&1 || { cat build/tsan-configure.log; exit 1; }
cmake --build build/tsan -j "$JOBS"
(cd build/tsan && ctest -L threads --output-on-failure)

echo "== all tests (native build)"
cd build/native && ctest --output-on-failure
