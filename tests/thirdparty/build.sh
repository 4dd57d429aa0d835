#!/bin/sh
# Builds the third-party drivers (tests/thirdparty/project) of both flavours, fetching
# Debian's lua5.4 and libzstd source packages first. Run by the thirdparty_build test (a
# ctest fixture the other thirdparty tests require) and by bench/thirdparty. Everything
# lands in the build tree and stays there: a second run fetches and compiles nothing
# (ninja only relinks what a changed libvor.a or driver touches).
#
#   sh tests/thirdparty/build.sh NATIVE_BUILD WASM_BUILD OUT
#     NATIVE_BUILD, WASM_BUILD: vor's two build folders (build/native, build/wasm), whose
#     lib/libvor.a the drivers link (both must be built: `make`); OUT (build/ beside them):
#     the sources go to OUT/deps/{lua5.4,libzstd}-source, the drivers to
#     OUT/thirdparty/{native,wasm}/bin.
# Prints the wall time of each flavour's build (for docs/PERFORMANCE.md).
set -eu
if [ $# -ne 3 ]; then
    echo "usage: sh tests/thirdparty/build.sh NATIVE_BUILD WASM_BUILD OUT" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
native=$(cd "$1" && pwd)
wasm=$(cd "$2" 2>/dev/null && pwd) || { echo "thirdparty: $2 does not exist: build the wasm flavour first (make)" >&2; exit 1; }
mkdir -p "$3"
build=$(cd "$3" && pwd)
JOBS=${JOBS:-2}
for package in lua5.4 libzstd; do
    sh "$repo/scripts/fetch-debian-source.sh" "$package" "$build/deps/$package-source"
done

now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# configure_and_build FLAVOUR LIBDIR [emcmake]
configure_and_build() {
    flavour=$1
    libdir=$2
    shift 2
    out=$build/thirdparty/$flavour
    mkdir -p "$out"
    if [ ! -f "$libdir/libvor.a" ]; then
        echo "thirdparty: $libdir/libvor.a is missing: build vor's $flavour flavour first (make)" >&2
        return 1
    fi
    start=$(now)
    # Configured once (again only if it was configured against another libvor).
    if [ ! -f "$out/build.ninja" ] || ! grep -qx "VOR_LIBRARY_DIR:PATH=$libdir" "$out/CMakeCache.txt"; then
        "$@" cmake -S "$here/project" -B "$out" -G Ninja -DVOR_SOURCE_DIR="$repo" -DVOR_LIBRARY_DIR="$libdir" \
            -DTHIRDPARTY_DEPS_DIR="$build/deps" > "$out/configure.log" 2>&1 ||
            { cat "$out/configure.log" >&2; rm -f "$out/build.ninja"; return 1; }
    fi
    cmake --build "$out" -j "$JOBS" > "$out/build.log" 2>&1 || { cat "$out/build.log" >&2; return 1; }
    echo "thirdparty: $flavour drivers in $out/bin ($(grep -c 'Building C object' "$out/build.log" || true) files compiled, $(seconds_since "$start") s)"
}

configure_and_build native "$native/lib"
# Debian's emcc needs Debian's acorn at -O1 and above (README, "NODE_PATH").
export NODE_PATH=/usr/share/nodejs
configure_and_build wasm "$wasm/lib" emcmake
