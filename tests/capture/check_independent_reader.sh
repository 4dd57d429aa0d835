#!/bin/sh
# Records a capture with the example, reads it with the reference reader (capture_dump)
# and with the independent Python reader written from docs/FORMAT.md, and requires the
# two to agree on every frame, value, unit and scope.
set -eu
example=$1
dump=$2
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VOR_RECORD="$tmp/run.vor" VOR_RECORD_FLAME=1 VOR_RECORD_EVERY=2 "$example" 60 > /dev/null
"$dump" "$tmp/run.vor" > "$tmp/reference.jsonl"
/usr/bin/python3 "$here/independent_reader.py" "$tmp/run.vor" > "$tmp/independent.jsonl"
/usr/bin/python3 - "$tmp/reference.jsonl" "$tmp/independent.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == 60, "reference read %d frames" % len(a)
assert a == b, next(("frame %d differs:\n%s\n%s" % (i, x, y)) for i, (x, y) in enumerate(zip(a, b)) if x != y) if len(a) == len(b) else "frame counts differ: %d vs %d" % (len(a), len(b))
print("independent reader agrees on %d frames, %d scopes" % (len(a), sum(len(f["scopes"]) for f in a)))
PY
