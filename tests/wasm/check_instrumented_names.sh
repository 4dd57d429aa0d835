#!/bin/sh
# Runs the -finstrument-functions workload built to wasm (with and without function names)
# under node with VOR_TRACE, then checks the traces (instrumented_names.test.mjs).
set -eu
bin=$1
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for variant in instrumented_names instrumented_names_stripped; do
    test -f "$bin/$variant.cjs" || { echo "missing $bin/$variant.cjs: build the wasm flavour first" >&2; exit 1; }
    VOR_TRACE="$tmp/$variant.json" node "$bin/$variant.cjs" > "$tmp/$variant.out" 2> "$tmp/$variant.err" ||
        { cat "$tmp/$variant.err" >&2; exit 1; }
done
node "$here/instrumented_names.test.mjs" "$tmp/instrumented_names.json" "$tmp/instrumented_names_stripped.json"
