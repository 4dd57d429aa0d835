"""vor.Reader and vor.read_metrics on real captures: fields, parents, units, the 1.0
reference capture, damaged records, fed bytes, errors, and agreement with `vor summary`."""

import json
import math
import os
import subprocess

import pytest

import vor
from conftest import SOURCE_DIR, Session, scopes_named


def write_capture(path, frames=20, flame=True):
    with Session(path, flame=flame):
        vor.record_metric_unit("loss", "nats")
        for i in range(frames):
            with vor.scope("step"):
                with vor.scope("inner"):
                    pass
            if i >= 5:
                vor.record_metric("loss", 1.0 / (i + 1))
            vor.record_io(1000, 2000)
            vor.frame_mark()
    return str(path)


def test_frames_carry_metrics_units_and_scopes(tmp_path):
    path = write_capture(tmp_path / "a.vor")
    with vor.Reader(path) as r:
        frames = list(r)
        assert r.finished and r.damage == [] and r.damage_count == 0 and r.error == ""
        info = r.info
        columns = {c.name: c for c in r.columns}
    assert [f.index for f in frames] == list(range(20))
    assert info["version"] >= (1, 1) and info["flame"] is True and info["pid"] == os.getpid()
    assert info["producer"].startswith("vor ")
    assert columns["loss"].unit == "nats" and not columns["loss"].is_system and columns["frame_ms"].is_system
    f = frames[7]
    assert f.metrics["loss"] == pytest.approx(1 / 8) and f.units["loss"] == "nats"
    assert f.units["frame_ms"] == "ms" and f.metrics["frame_ms"] == pytest.approx(f.duration_ns / 1e6, rel=1e-6)
    assert f.metrics["io_MB"] == pytest.approx(0.002)
    assert "loss" not in frames[3].metrics
    assert f.has_flame and f.dropped_scopes == 0 and f.drops == []
    step, inner = scopes_named([f], "step")[0], scopes_named([f], "inner")[0]
    assert inner.depth == 1 and f.scopes[inner.parent] == step and step.parent is None
    assert not step.open and not step.unwound and step.thread == "MainThread"
    assert f.start_ns <= step.start_ns <= inner.start_ns
    assert inner.start_ns + inner.duration_ns <= step.start_ns + step.duration_ns <= f.start_ns + f.duration_ns
    assert frames[1].start_ns >= frames[0].start_ns + frames[0].duration_ns


def test_the_reference_1_0_capture_reads_as_its_dump():
    data = os.path.join(SOURCE_DIR, "tests", "capture", "data")
    expected = [json.loads(line) for line in open(os.path.join(data, "capture-1.0.jsonl"))]
    frames = list(vor.Reader(os.path.join(data, "capture-1.0.vor")))
    assert len(frames) == len(expected)
    for f, e in zip(frames, expected):
        assert (f.index, f.start_ns, f.duration_ns, f.overhead_ns) == (e["index"], e["start"], e["duration"], e["overhead"])
        assert f.metrics == pytest.approx(e["values"]) and f.units == e["units"]
        got = [[s.thread, s.name, s.depth, s.start_ns, s.duration_ns, s.file, s.line] for s in f.scopes]
        assert got == e["scopes"]


def test_a_damaged_record_is_skipped_and_reported(tmp_path):
    path = write_capture(tmp_path / "damaged.vor", frames=30)
    data = bytearray(open(path, "rb").read())
    at = len(data) * 3 // 5
    data[at] ^= 0x5A
    open(path, "wb").write(bytes(data))
    r = vor.Reader(path)
    frames = list(r)
    assert r.damage_count == 1 and len(r.damage) == 1
    d = r.damage[0]
    assert d.offset <= at < d.offset + d.length and d.problem
    assert len(frames) == 29 and r.finished  # one record lost, the rest read on
    table = vor.read_metrics(path)
    assert table.damage_count == 1 and len(table.index) == 29


def test_fed_bytes_read_as_the_file(tmp_path):
    path = write_capture(tmp_path / "fed.vor")
    data = open(path, "rb").read()
    r = vor.Reader()
    frames = []
    for i in range(0, len(data), 97):
        r.feed(data[i:i + 97])
        frames.extend(r)
    assert r.finished
    assert frames == list(vor.Reader(path))
    with pytest.raises(ValueError, match="reads a file"):
        vor.Reader(path).feed(b"x")


def test_what_is_not_a_capture_raises_capture_error(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("these are not the bytes of a capture, but there are enough of them to hold a header\n" * 4)
    with pytest.raises(vor.CaptureError, match="notes.txt"):
        list(vor.Reader(str(text)))
    with pytest.raises(vor.CaptureError, match="missing.vor"):
        vor.Reader(str(tmp_path / "missing.vor"))
    with pytest.raises(vor.CaptureError):
        vor.read_metrics(str(text))
    r = vor.Reader()
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.read()


def test_read_metrics_gives_one_array_per_metric(tmp_path):
    numpy = pytest.importorskip("numpy")
    path = write_capture(tmp_path / "m.vor")
    table = vor.read_metrics(path)
    assert set(table) == {"frame_ms", "memory_mb", "io_ms", "io_MB", "cpu_ms", "loss"}
    assert table.units["loss"] == "nats" and "frame_ms" in table.system and "loss" not in table.system
    loss = table["loss"]
    assert isinstance(loss, numpy.ndarray) and loss.dtype == numpy.float64 and len(loss) == 20
    assert numpy.isnan(loss[:5]).all() and loss[5:] == pytest.approx([1 / (i + 1) for i in range(5, 20)])
    assert list(table.index) == list(range(20)) and table.finished
    frames = list(vor.Reader(path))
    assert list(table.start_ns) == [f.start_ns for f in frames]
    assert list(table["frame_ms"]) == [f.metrics["frame_ms"] for f in frames]
    lists = vor.read_metrics(path, numpy=False)
    assert isinstance(lists["loss"], list) and math.isnan(lists["loss"][0]) and lists["loss"][5] == loss[5]
    assert lists.index == list(range(20))


def test_python_reader_and_vor_summary_agree(tmp_path, vor_cli):
    path = write_capture(tmp_path / "s.vor", frames=40)
    out = subprocess.run([vor_cli, "summary", path, "--json"], capture_output=True, text=True, check=True).stdout
    summary = json.loads(out)
    frames = list(vor.Reader(path))
    assert summary["frames"] == len(frames) and summary["finished"] is True
    assert summary["scopes"] == sum(1 for f in frames for s in f.scopes if not s.open)
    assert summary["span_ns"] == frames[-1].start_ns + frames[-1].duration_ns - frames[0].start_ns
    metrics = {m["name"]: m for m in summary["metrics"]}
    # (frame_ms is left out: vor summary compensates it for the profiler's own cost.)
    for name in ("loss", "io_MB", "memory_mb"):
        values = [f.metrics[name] for f in frames if name in f.metrics]
        assert metrics[name]["frames"] == len(values)
        assert metrics[name]["min"] == pytest.approx(min(values))
        assert metrics[name]["max"] == pytest.approx(max(values))
        assert metrics[name]["mean"] == pytest.approx(sum(values) / len(values))
    calls = {t["name"]: t["calls"] for t in summary["top_by_total"]}
    assert calls == {"step": 40, "inner": 40}
