#!/bin/sh
# `make demo`: runs the example natively and prints its frame statistics.
set -eu
cd "$(dirname "$0")/.."
mkdir -p build/demo
echo "== training_loop (native): 300 steps, nested scopes on two threads, I/O, a loss metric"
build/native/bin/training_loop 300
