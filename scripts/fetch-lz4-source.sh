#!/bin/sh
# Fetches Debian bookworm's lz4 source (the library behind the native liblz4) into
# build/deps/lz4-source (or DEPS/lz4-source), so the WebAssembly build compiles lib/lz4.c with emcc. Debian's
# liblz4 package is native only.
#
# Uses a private apt configuration (one deb-src line, lists and cache under build/deps),
# so the machine's /etc/apt is never touched; apt verifies the files against the signed
# Release file. No Debian revision is pinned: a stable update replaces the old source in
# the archive, and a pin would then break every fresh build. Downloads are tried three
# times. Idempotent: does nothing when the source is already there.
#
#   sh scripts/fetch-lz4-source.sh [DEPS]   into DEPS/lz4-source (default: build/deps of the
#                                           repository; the wasm build's CMake passes its own)
set -eu
if [ $# -ge 1 ]; then
    mkdir -p "$1"
    deps=$(cd "$1" && pwd)
else
    cd "$(dirname "$0")/.."
    deps=$PWD/build/deps
fi
src=$deps/lz4-source
[ -f "$src/lib/lz4.c" ] && exit 0

mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial" "$deps/apt/etc"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    > "$deps/apt/etc/sources.list"
APT="-o Dir::Etc::SourceList=$deps/apt/etc/sources.list -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists=$deps/apt/lists -o Dir::Cache=$deps/apt/cache -o APT::Sandbox::User=root"

download() {
    # shellcheck disable=SC2086
    apt-get $APT update -qq && (cd "$deps" && apt-get $APT source --download-only -qq lz4)
}
echo "fetch-lz4-source: downloading Debian's lz4 source package"
for attempt in 1 2 3; do
    download && break
    if [ "$attempt" = 3 ]; then
        echo "fetch-lz4-source: could not download Debian's lz4 source (3 attempts); check the network" >&2
        exit 1
    fi
    echo "fetch-lz4-source: download failed (attempt $attempt of 3); retrying in 10 s" >&2
    sleep 10
done

# The newest orig tarball downloaded, unpacked to a fixed directory name.
orig=$(ls "$deps"/lz4_*.orig.tar.gz | sort -V | tail -n 1)
unpack=$deps/lz4-unpack
rm -rf "$unpack" "$src"
mkdir -p "$unpack"
tar -xzf "$orig" -C "$unpack"
mv "$unpack"/lz4-* "$src"
rmdir "$unpack"
test -f "$src/lib/lz4.c"
echo "fetch-lz4-source: $src ($(basename "$orig"))"
