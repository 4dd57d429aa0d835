#!/bin/sh
# Runs the deterministic workload natively and as wasm under node, each recording a
# capture with flame frames, and compares them (compare_native_wasm.py).
set -eu
native=$1
wasm=$2
dump=$3
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
test -f "$wasm" || { echo "missing $wasm: build the wasm flavour first (make, or scripts/build-wasm.sh)" >&2; exit 1; }
VOR_RECORD="$tmp/native.vor" VOR_RECORD_FLAME=1 "$native" > /dev/null
VOR_RECORD="$tmp/wasm.vor" VOR_RECORD_FLAME=1 node "$wasm" > /dev/null
"$dump" "$tmp/native.vor" > "$tmp/native.jsonl"
"$dump" "$tmp/wasm.vor" > "$tmp/wasm.jsonl"
/usr/bin/python3 "$here/compare_native_wasm.py" "$tmp/native.jsonl" "$tmp/wasm.jsonl"
