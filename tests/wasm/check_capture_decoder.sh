#!/bin/sh
# Records a capture with the native example (flame frames included, metrics with NaN-free
# values), dumps it with the reference reader, and runs the decoder's node tests on it.
set -eu
example=$1
dump=$2
site=$3
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
test -f "$site/vor_decoder.wasm" || { echo "missing $site/vor_decoder.wasm: build the wasm flavour first" >&2; exit 1; }
VOR_RECORD="$tmp/run.vor" VOR_RECORD_FLAME=1 VOR_RECORD_EVERY=3 "$example" 90 > /dev/null
"$dump" "$tmp/run.vor" > "$tmp/reference.jsonl"
node --no-experimental-fetch "$here/capture_decoder.test.mjs" "$site" "$tmp/run.vor" "$tmp/reference.jsonl"
