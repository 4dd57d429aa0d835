#!/bin/sh
# Fetches Debian's lz4 source (the same 1.9.4 as the native liblz4) into build/deps/,
# so the WebAssembly build compiles lib/lz4.c with emcc. Debian's liblz4 is native only.
#
# Uses a private apt configuration (one deb-src line, lists and cache under build/deps),
# so the machine's /etc/apt is never touched; apt verifies the files against the signed
# Release file. Idempotent: does nothing when the source is already there.
set -eu
cd "$(dirname "$0")/.."
deps=$PWD/build/deps
src=$deps/lz4-1.9.4
[ -f "$src/lib/lz4.c" ] && exit 0

mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial" "$deps/apt/etc"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
    > "$deps/apt/etc/sources.list"
APT="-o Dir::Etc::SourceList=$deps/apt/etc/sources.list -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists=$deps/apt/lists -o Dir::Cache=$deps/apt/cache -o APT::Sandbox::User=root"
echo "fetch-lz4-source: downloading Debian's lz4 source package"
# shellcheck disable=SC2086
apt-get $APT update -qq
# shellcheck disable=SC2086
(cd "$deps" && apt-get $APT source --download-only -qq lz4=1.9.4-1)
tar -xzf "$deps/lz4_1.9.4.orig.tar.gz" -C "$deps"
test -f "$src/lib/lz4.c"
echo "fetch-lz4-source: $src"
