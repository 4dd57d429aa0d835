"""A Python capture against a C one: examples/python/training_loop.py and
examples/training_loop.c record the same scopes, threads and metric, and `vor diff` (text,
JSON and the differential flame graph) compares them scope by scope."""

import json
import os
import subprocess

import vor
from conftest import SOURCE_DIR

STEPS = "12"


def test_python_and_c_runs_of_the_example_diff_scope_by_scope(tmp_path, run_python, vor_cli, c_example):
    c_capture, py_capture = str(tmp_path / "c.vor"), str(tmp_path / "python.vor")
    env = {"VOR_RECORD_FLAME": "1"}
    subprocess.run([c_example, STEPS], env={**os.environ, **env, "VOR_RECORD": c_capture}, check=True,
                   capture_output=True)
    example = os.path.join(SOURCE_DIR, "examples", "python", "training_loop.py")
    out = run_python([example, STEPS], env={**env, "VOR_RECORD": py_capture}).stdout
    assert f"{STEPS} steps" in out

    def calls(capture):
        c = {}
        for f in vor.Reader(capture):
            for s in f.scopes:
                if not s.open:
                    c[s.name] = c.get(s.name, 0) + 1
        return c

    c_calls, py_calls = calls(c_capture), calls(py_capture)
    # The loader reads one batch ahead: the batch asked for in the last step may be read
    # within the last frame or after it (then in no frame), in either program.
    for c in (c_calls, py_calls):
        assert c.pop("load batch") in (int(STEPS), int(STEPS) + 1)
    assert c_calls == py_calls  # the same scopes, the same number of times
    threads = {s.thread for f in vor.Reader(py_capture) for s in f.scopes}
    assert threads == {"main", "loader"}
    assert vor.read_metrics(py_capture).units["loss"] == "nats"

    diff = subprocess.run([vor_cli, "diff", c_capture, py_capture, "--json", "--svg", str(tmp_path / "diff.svg")],
                          capture_output=True, text=True, check=True)
    rows = {row["name"]: row for row in json.loads(diff.stdout)["scopes"]}
    assert set(rows) == set(c_calls) | {"load batch"}
    for name, count in c_calls.items():
        assert rows[name]["a"]["calls"] == rows[name]["b"]["calls"] == count
    svg = (tmp_path / "diff.svg").read_text()
    assert svg.startswith("<?xml") or svg.startswith("<svg")
    assert "matvec row block" in svg
