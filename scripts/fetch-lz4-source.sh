#!/bin/sh
# Debian bookworm's lz4 source (the library behind the native liblz4) into
# DEPS/lz4-source, so the WebAssembly build compiles lib/lz4.c with emcc (Debian's liblz4
# package is native only). A thin wrapper: fetch-debian-source.sh does the work.
#
#   sh scripts/fetch-lz4-source.sh [DEPS]   into DEPS/lz4-source (default: build/deps of the
#                                           repository; the wasm build's CMake passes its own)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
deps=${1:-$here/../build/deps}
sh "$here/fetch-debian-source.sh" lz4 "$deps/lz4-source"
test -f "$deps/lz4-source/lib/lz4.c" || { echo "fetch-lz4-source: $deps/lz4-source has no lib/lz4.c" >&2; exit 1; }
