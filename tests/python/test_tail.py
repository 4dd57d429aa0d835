"""A reader following a capture that a running Python program is writing, as the C reader
does: every frame arrives while the writer runs, and the end record ends the following.
Hand-shakes (a stop file), not timing, decide when the writer ends."""

import os
import signal
import subprocess
import sys
import time

import vor
from conftest import child_env

WRITER = r"""
import os, sys, time
import vor
stop = sys.argv[1]
vor.record_metric_unit("i", "count")
vor.enable()
i = 0
while not os.path.exists(stop):
    with vor.scope("tick"):
        with vor.scope("tock"):
            pass
    vor.record_metric("i", i)
    vor.frame_mark()
    i += 1
    time.sleep(0.005)
if sys.argv[2] == "finish":
    vor.shutdown()
    print(i, flush=True)
else:
    print(i, flush=True)
    time.sleep(600)  # killed by the test, never finishes the capture
"""


def start_writer(tmp_path, mode):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    path, stop = tmp_path / "live.vor", tmp_path / "stop"
    env = child_env({"VOR_RECORD": str(path), "VOR_RECORD_FLAME": "1"})
    proc = subprocess.Popen([sys.executable, str(script), str(stop), mode], env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not path.exists():
        assert proc.poll() is None, "the writer exited before creating its capture"
        assert time.monotonic() < deadline, "the writer never created its capture"
        time.sleep(0.01)
    return proc, str(path), stop


def test_follow_a_running_writer_to_its_end(tmp_path):
    proc, path, stop = start_writer(tmp_path, "finish")
    try:
        reader = vor.Reader(path)
        frames = []
        for frame in reader.follow(poll_interval=0.005, timeout=180):
            frames.append(frame)
            if len(frames) == 5:
                assert proc.poll() is None  # these frames came while the writer was running
                stop.write_text("")
        written = int(proc.communicate(timeout=120)[0])
    finally:
        proc.kill()
        proc.wait()
    assert reader.finished
    assert len(frames) == written and written >= 5
    assert [f.index for f in frames] == list(range(written))
    assert [f.metrics["i"] for f in frames] == [float(i) for i in range(written)]
    assert all(len(f.scopes) == 2 for f in frames)
    assert frames[0].units["i"] == "count"


def test_iterating_again_picks_up_new_frames_and_a_killed_writer_loses_nothing_complete(tmp_path):
    proc, path, stop = start_writer(tmp_path, "hang")
    try:
        reader = vor.Reader(path)
        seen = []
        deadline = time.monotonic() + 180
        while len(seen) < 3:  # each pass reads what is complete now, then stops
            seen.extend(reader)
            assert time.monotonic() < deadline
            time.sleep(0.005)
        stop.write_text("")
        written = int(proc.stdout.readline())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        seen.extend(reader.follow(poll_interval=0.005, idle_timeout=0.5))
    finally:
        proc.kill()
        proc.wait()
    assert not reader.finished  # no end record: the writer was killed
    assert [f.index for f in seen] == list(range(written))
