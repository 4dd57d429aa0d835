#!/bin/sh
# `make demo`: the main job, end to end (after `make` built both flavours):
#   1. the example natively: its frame statistics, and a capture with flame frames
#   2. the same example as wasm under node, recording the same way, and its Python twin
#      (examples/python/training_loop.py, the vor Python package)
#   3. their comparison: `vor diff` table and differential flame graph, and a flame graph
#   4. a live run recording into build/demo/live.vor, served with the panel and the wasm
#      example page by `vor serve` on 127.0.0.1:8700 until Ctrl-C
# Everything lands in build/demo/.
set -eu
cd "$(dirname "$0")/.."
demo=build/demo
vor=build/native/bin/vor
port=${VOR_DEMO_PORT:-8700}
mkdir -p "$demo"
rm -f "$demo"/*.vor

echo "== 1. training_loop (native): nested scopes on two threads, I/O, a loss metric"
VOR_RECORD="$demo/native.vor" VOR_RECORD_FLAME=1 build/native/bin/training_loop 300

echo
echo "== 2. the same source as WebAssembly, under node"
VOR_RECORD="$demo/wasm.vor" VOR_RECORD_FLAME=1 node build/wasm/bin/training_loop.cjs 300

echo
echo "== 2b. the same loop in Python (examples/python/training_loop.py)"
PYTHONPATH=build/native/python VOR_RECORD="$demo/python.vor" VOR_RECORD_FLAME=1 \
    /usr/bin/python3 examples/python/training_loop.py 300

echo
echo "== 3. native vs wasm, scope by scope (full table: $demo/native-vs-wasm.txt)"
"$vor" diff "$demo/native.vor" "$demo/wasm.vor" --svg "$demo/native-vs-wasm.svg" > "$demo/native-vs-wasm.txt"
head -n 12 "$demo/native-vs-wasm.txt"
"$vor" flamegraph "$demo/native.vor" -o "$demo/native-flamegraph.svg" --title "training_loop (native)"
"$vor" flamegraph "$demo/wasm.vor" -o "$demo/wasm-flamegraph.svg" --title "training_loop (wasm, node)"
"$vor" diff "$demo/native.vor" "$demo/python.vor" --svg "$demo/native-vs-python.svg" > "$demo/native-vs-python.txt"
"$vor" flamegraph "$demo/python.vor" -o "$demo/python-flamegraph.svg" --title "training_loop.py (Python)"
echo "flame graphs: $demo/native-flamegraph.svg, $demo/wasm-flamegraph.svg, $demo/python-flamegraph.svg"
echo "differential: $demo/native-vs-wasm.svg, $demo/native-vs-python.svg (table: $demo/native-vs-python.txt)"

echo
echo "== 4. a live run, served with the panel"
VOR_RECORD="$demo/live.vor" VOR_RECORD_FLAME=1 VOR_RECORD_EVERY=5 build/native/bin/training_loop 100000000 > "$demo/live.log" 2>&1 &
live=$!
trap 'kill "$live" 2>/dev/null; wait "$live" 2>/dev/null; echo; echo "demo stopped"' EXIT INT TERM
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$demo/live.vor" ] && break; sleep 0.2; done
cat <<EOT

  panel, following the live capture:  http://127.0.0.1:$port/
  (its capture picker also opens native.vor, wasm.vor and python.vor, the Python run)
  the example compiled to wasm:       http://127.0.0.1:$port/example.html
  (open DevTools > Performance and record on that page: its scopes are on the "vor" tracks)
  Ctrl-C stops the server and the live run.

EOT
"$vor" serve "$demo/live.vor" "$demo/native.vor" "$demo/wasm.vor" "$demo/python.vor" --port "$port" --site build/site || true
