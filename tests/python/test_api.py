"""The module-level API: sessions, settings, metrics, statistics, counters, and the
environment variables, which behave as they do for a C program."""

import json
import threading

import pytest

import vor
from conftest import Session, scopes_named


def test_enable_disable_and_setup(tmp_path):
    assert vor.setup(thread_buffer_scopes=4096) is True
    with Session(tmp_path / "s.vor"):
        assert vor.is_enabled()
        assert vor.setup(max_threads=8) is False  # too late: a session runs
        vor.disable()
        assert not vor.is_enabled()
        vor.enable()
        assert vor.is_enabled()
    assert not vor.is_enabled()
    assert vor.setup() is True  # back to the defaults
    with pytest.raises(TypeError):
        vor.setup(4096)  # keyword-only


def test_metrics_io_and_units(record):
    def work():
        vor.record_metric_unit("throughput", "tokens/s")
        vor.record_metric("throughput", 1234.5)
        vor.record_metric("plain", 7)
        vor.record_metric("diverged", float("nan"))
        vor.record_io(2_000_000, 3_000_000)

    frame = record(work)[0]
    assert frame.metrics["throughput"] == 1234.5 and frame.units["throughput"] == "tokens/s"
    assert frame.metrics["plain"] == 7.0 and frame.units["plain"] == ""
    assert frame.metrics["diverged"] != frame.metrics["diverged"]  # NaN, recorded as given
    assert frame.metrics["io_ms"] == pytest.approx(2.0) and frame.metrics["io_MB"] == pytest.approx(3.0)


def test_bad_arguments_raise_and_name_the_problem():
    with pytest.raises(TypeError, match="metric name must be a str"):
        vor.record_metric(1, 2.0)
    with pytest.raises(TypeError):
        vor.record_metric("x", "not a number")
    with pytest.raises(ValueError, match="NUL"):
        vor.record_metric("a\0b", 1.0)
    with pytest.raises(TypeError, match="record_metric\\(name, value\\)"):
        vor.record_metric("x")
    with pytest.raises(ValueError, match="ns must be between"):
        vor.record_io(-1, 0)
    with pytest.raises(TypeError):
        vor.record_io(1.5, 0)
    with pytest.raises(TypeError, match="unit must be a str"):
        vor.record_metric_unit("x", None)
    with pytest.raises(TypeError, match="thread name must be a str"):
        vor.set_thread_name(3)
    with pytest.raises(ValueError, match="between 0 and 100"):
        vor.frame_stats_percentile(101)


def test_frame_stats_calibration_clock_and_counters(tmp_path):
    vor.frame_stats_reset()
    with Session(tmp_path / "stats.vor", flame=False):
        for _ in range(10):
            vor.frame_mark()
        stats = vor.frame_stats()
        counters = vor.counters()
    assert set(stats) == {"count", "min_ns", "max_ns", "mean_ns", "p50_ns", "p95_ns", "p99_ns"}
    assert stats["count"] == 10 and stats["min_ns"] <= stats["p50_ns"] <= stats["p99_ns"] <= stats["max_ns"]
    assert counters["frames"] == 10 and counters["python_sites"] >= 0
    assert vor.frame_stats_percentile(50) > 0
    assert vor.calibrate() > 0 and vor.empty_span_ns() > 0
    a = vor.now_ns()
    assert vor.now_ns() >= a > 0


def test_record_every_and_max_frames_behave_as_in_c(tmp_path):
    def run(extra):
        with Session(tmp_path / f"{next(iter(extra)).lower()}.vor", extra_env=extra) as s:
            for _ in range(9):
                with vor.scope("work"):
                    pass
                vor.frame_mark()
        return s.frames()

    every = run({"VOR_RECORD_EVERY": "3"})
    assert [f.index for f in every if f.has_flame] == [0, 3, 6] and len(every) == 9
    first = run({"VOR_RECORD_MAX_FRAMES": "2"})
    assert [f.index for f in first if f.has_flame] == [0, 1] and len(first) == 9


def test_vor_trace_writes_python_scopes_as_chrome_json(tmp_path):
    trace = tmp_path / "t.json"
    with Session(tmp_path / "t.vor", extra_env={"VOR_TRACE": str(trace)}):
        def body():
            with vor.scope("on a thread"):
                pass

        t = threading.Thread(target=body, name="side")
        t.start()
        t.join()
        with vor.scope("traced"):
            pass
        vor.frame_mark()
        vor.flush_recording()
    events = json.loads(trace.read_text())
    spans = {e["name"]: e for e in events if e.get("ph") == "X"}
    assert "traced" in spans and "on a thread" in spans
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert "side" in names


def test_misuse_is_counted_not_fatal(record):
    """An exit without an enter is ignored; the program goes on."""
    before = vor.counters()["python_ends_out_of_order"]

    def work():
        vor.scope("never entered").__exit__(None, None, None)
        with vor.scope("fine"):
            pass

    frames = record(work)
    assert len(scopes_named(frames, "fine")) == 1
    assert vor.counters()["python_ends_out_of_order"] == before + 1
