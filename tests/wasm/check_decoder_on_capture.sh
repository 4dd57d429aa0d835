#!/bin/sh
# Records a capture with a native workload (flame frames on 1 frame in EVERY), dumps it with
# the reference reader (capture_dump), and runs a node test of the wasm capture decoder on
# both: the decoder must read what the reference reader reads.
# usage: check_decoder_on_capture.sh TEST.mjs EVERY WORKLOAD DUMP SITE_DIR [WORKLOAD ARGS...]
set -eu
test_script=$1
every=$2
workload=$3
dump=$4
site=$5
shift 5
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
test -f "$site/vor_decoder.wasm" || { echo "missing $site/vor_decoder.wasm: build the wasm flavour first" >&2; exit 1; }
VOR_RECORD="$tmp/run.vor" VOR_RECORD_FLAME=1 VOR_RECORD_EVERY="$every" "$workload" "$@" > /dev/null 2> "$tmp/stderr.txt" ||
    { cat "$tmp/stderr.txt" >&2; exit 1; }
"$dump" "$tmp/run.vor" > "$tmp/reference.jsonl"
node --no-experimental-fetch "$here/$test_script" "$site" "$tmp/run.vor" "$tmp/reference.jsonl"
