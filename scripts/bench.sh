#!/bin/sh
# `make bench`: prints every benchmark's figures (nothing is asserted). Record them in
# docs/PERFORMANCE.md with the machine, the date and this command.
#   build/native/bin/bench_*   native benchmark programs
#   bench/*/*.bench.mjs        node runners (headless Chromium, wasm)
#   bench/*/*.bench.py         Python runners (Debian's python3, the package built in build/native/python)
set -eu
cd "$(dirname "$0")/.."
echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(date -u +%Y-%m-%d)"
for b in build/native/bin/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b"
done
for b in bench/*/*.bench.mjs; do
    [ -f "$b" ] || continue
    echo "== $b"
    node "$b"
done
for b in bench/*/*.bench.py; do
    [ -f "$b" ] || continue
    [ -d build/native/python/vor ] || { echo "== $b: skipped (the Python package was not built)"; continue; }
    echo "== $b"
    PYTHONPATH=build/native/python /usr/bin/python3 "$b"
done
