#!/bin/sh
# Installs the build into a temporary prefix, then builds and runs a consumer with
# CMake's find_package, with pkg-config, and against the shared library.
set -eu
build=$1
consumer=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -f "$tmp/prefix/include/vor/vor.h"
libdir=$(dirname "$(find "$tmp/prefix" -name libvor.a | head -1)")
test -f "$libdir/libvor.a"
test -f "$libdir/libvor.so"
test -f "$tmp/prefix/include/vor/reader.h"
"$tmp/prefix/bin/vor" --version | grep -q "^vor "
test -f "$tmp/prefix/share/vor/site/index.html"   # the panel, for vor serve

cmake -S "$consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log"
cmake --build "$tmp/cmake-build" > "$tmp/build.log"
"$tmp/cmake-build/consumer"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -o "$tmp/pc-static" "$consumer/main.c" $(pkg-config --cflags vor) "$libdir/libvor.a" $(pkg-config --libs-only-l --static vor | sed 's/-lvor//')
"$tmp/pc-static"
cc -o "$tmp/pc-shared" "$consumer/main.c" $(pkg-config --cflags --libs vor) -Wl,-rpath,"$libdir"
"$tmp/pc-shared"
echo "install: headers, libraries and vor installed; find_package, pkg-config (static and shared) build and run"
