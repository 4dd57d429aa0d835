#!/usr/bin/env python3
"""compare_native_wasm.py NATIVE_JSONL WASM_JSONL: the two captures of the deterministic
workload (dumped by capture_dump) must have the same frames, the same scopes in the same
order with the same names, depths and threads, the same nesting (each child inside its
parent), and the same user metric values. Times and system metrics may differ."""
import json
import sys

SYSTEM = {"frame_ms", "memory_mb", "wasm_heap_mb", "io_ms", "io_MB", "cpu_ms"}


def load(path):
    return [json.loads(line) for line in open(path)]


def structure(frame):
    return [(s[0], s[1], s[2]) for s in frame["scopes"]]


def user_values(frame):
    return {k: v for k, v in frame["values"].items() if k not in SYSTEM}


def check_nesting(frame, label):
    # End order: a scope's children precede it; each child must lie inside its parent.
    scopes = frame["scopes"]
    for i, (thread, name, depth, start, dur, _file, _line) in enumerate(scopes):
        if depth == 0:
            continue
        parent = next((p for p in scopes[i + 1:] if p[0] == thread and p[2] == depth - 1), None)
        assert parent is not None, "%s frame %d: %s has no parent" % (label, frame["index"], name)
        assert parent[3] <= start and start + dur <= parent[3] + parent[4], \
            "%s frame %d: %s not inside %s" % (label, frame["index"], name, parent[1])


native, wasm = load(sys.argv[1]), load(sys.argv[2])
assert len(native) == 40, "native capture has %d frames" % len(native)
assert len(wasm) == len(native), "wasm capture has %d frames, native %d" % (len(wasm), len(native))
for n, w in zip(native, wasm):
    assert n["index"] == w["index"]
    assert structure(n) == structure(w), "frame %d scopes differ:\n%s\n%s" % (n["index"], structure(n), structure(w))
    assert user_values(n) == user_values(w), "frame %d values differ: %s vs %s" % (n["index"], user_values(n), user_values(w))
    check_nesting(n, "native")
    check_nesting(w, "wasm")
assert "wasm_heap_mb" in wasm[0]["values"] and "cpu_ms" not in wasm[0]["values"]
assert "cpu_ms" in native[0]["values"] and "wasm_heap_mb" not in native[0]["values"]
print("native and wasm agree: %d frames, %d scopes" % (len(native), sum(len(f["scopes"]) for f in native)))
