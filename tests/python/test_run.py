"""python -m vor run: an unmodified script profiled function by function, frames marked by
a named function, modules, exit statuses, errors, and settings kept from child processes."""

import collections
import json
import subprocess
import sys
import textwrap

import pytest

import vor

SCRIPT = textwrap.dedent(
    """
    import os, subprocess, sys, threading

    def leaf(n):
        return n * 2

    def rec(n):
        return 0 if n == 0 else rec(n - 1) + 1

    def gen(k):
        for i in range(k):
            yield leaf(i)

    class Trainer:
        def train_step(self, i):
            total = sum(gen(3)) + rec(3)
            worker = threading.Thread(target=leaf, args=(i,), name="helper")
            worker.start()
            worker.join()
            return total

    trainer = Trainer()
    for i in range(int(sys.argv[1])):
        trainer.train_step(i)
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('VOR_RECORD'))"],
                           capture_output=True, text=True)
    print("child sees", child.stdout.strip())
    sys.exit(int(sys.argv[2]))
    """
)


def run_vor(run_python, tmp_path, *options, script_args=("5", "0"), check=True):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    return run_python(["-m", "vor", "run", *options, str(script), *script_args], check=check, cwd=str(tmp_path))


def counts(frames):
    return collections.Counter(s.name for f in frames for s in f.scopes if not s.open)


def test_all_functions_with_a_frame_function(run_python, tmp_path):
    capture = str(tmp_path / "run.vor")
    proc = run_vor(run_python, tmp_path, "--record", capture, "--flame", "--all-functions",
                   "--frame-function", "train_step")
    assert "child sees None" in proc.stdout  # the settings were for this program only
    assert "5 frames" in proc.stderr and capture in proc.stderr
    frames = list(vor.Reader(capture))
    assert len(frames) == 5
    c = counts(frames)
    assert c["__main__.Trainer.train_step"] == 5
    assert c["__main__.gen"] == 20  # 4 resumptions per step
    assert c["__main__.rec"] == 20
    assert c["__main__.leaf"] == 20  # 3 from gen and 1 on the helper thread, per step
    assert not any(name.startswith("runpy.") or name.startswith("vor.") for name in c)
    for f in frames:
        steps = [s for s in f.scopes if s.name == "__main__.Trainer.train_step"]
        assert len(steps) == 1  # each frame ends with its step's return
        helper = [s for s in f.scopes if s.thread == "helper" and s.name == "__main__.leaf"]
        assert len(helper) == 1
        for s in f.scopes:
            if s.name == "__main__.rec" and s.depth > 0 and s.parent is not None and s.parent >= 0:
                assert f.scopes[s.parent].name in ("__main__.rec", "__main__.Trainer.train_step")


def test_frame_function_alone_marks_frames_without_scopes(run_python, tmp_path):
    capture = str(tmp_path / "frames.vor")
    run_vor(run_python, tmp_path, "--record", capture, "--frame-function", "Trainer.train_step")
    frames = list(vor.Reader(capture))
    assert len(frames) == 5 and not any(f.scopes for f in frames)


def test_a_run_without_frames_is_one_frame_and_the_exit_status_is_kept(run_python, tmp_path):
    capture = str(tmp_path / "one.vor")
    proc = run_vor(run_python, tmp_path, "--record", capture, "--flame", "--all-functions",
                   script_args=("2", "3"), check=False)
    assert proc.returncode == 3
    r = vor.Reader(capture)
    frames = list(r)
    assert r.finished and len(frames) == 1
    assert counts(frames)["__main__.Trainer.train_step"] == 2


def test_a_failing_script_still_leaves_a_complete_capture(run_python, tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("def boom():\n    raise RuntimeError('boom')\nboom()\n")
    capture = str(tmp_path / "fails.vor")
    proc = run_python(["-m", "vor", "run", "--record", capture, "--flame", "--all-functions", str(script)], check=False)
    assert proc.returncode == 1 and "RuntimeError: boom" in proc.stderr
    r = vor.Reader(capture)
    assert counts(list(r))["__main__.boom"] == 1 and r.finished


def test_a_module_runs_with_dash_m(run_python, tmp_path):
    (tmp_path / "mymod.py").write_text("import sys\ndef work():\n    return 1\nwork(); work()\nprint(sys.argv)\n")
    capture = str(tmp_path / "mod.vor")
    proc = run_python(["-m", "vor", "run", "--record", capture, "--flame", "--all-functions", "-m", "mymod", "x"],
                      cwd=str(tmp_path), env={"PYTHONPATH": f"{tmp_path}:{':'.join(p for p in sys.path if p)}"})
    assert "'x'" in proc.stdout
    assert counts(list(vor.Reader(capture)))["__main__.work"] == 2


def test_trace_output_is_chrome_json(run_python, tmp_path):
    trace = tmp_path / "t.json"
    run_vor(run_python, tmp_path, "--trace", str(trace), "--all-functions", "--frame-function", "train_step")
    events = json.loads(trace.read_text())
    names = {e.get("name") for e in events if e.get("ph") == "X"}
    assert "__main__.Trainer.train_step" in names and "__main__.leaf" in names


@pytest.mark.parametrize(
    "options, message",
    [
        (["--every", "2", "--record", "x.vor"], "add --flame"),
        (["--flame"], "add --record"),
        (["--every", "0", "--flame", "--record", "x.vor"], "'0' must be at least 1"),
        (["--thread-buffer", "lots"], "'lots' is not a whole number"),
    ],
)
def test_bad_options_say_what_is_wrong(run_python, tmp_path, options, message):
    proc = run_vor(run_python, tmp_path, *options, check=False)
    assert proc.returncode == 2 and message in proc.stderr


def test_missing_script_and_unknown_command(run_python, tmp_path):
    proc = run_python(["-m", "vor", "run", str(tmp_path / "nope.py")], check=False)
    assert proc.returncode == 2 and "nope.py: no such file" in proc.stderr
    proc = run_python(["-m", "vor", "frobnicate"], check=False)
    assert proc.returncode == 2 and "unknown command 'frobnicate'" in proc.stderr
    assert run_python(["-m", "vor", "version"]).stdout.strip() == vor.version


def test_decorated_functions_are_recorded_once_under_all_functions(run_python, tmp_path):
    script = tmp_path / "decorated.py"
    script.write_text(textwrap.dedent(
        """
        import vor

        @vor.profile("custom name")
        def step(i):
            return helper(i)

        def helper(i):
            return i

        @vor.skip
        def quiet():
            return helper(0)

        for i in range(4):
            step(i)
            quiet()
        """
    ))
    capture = str(tmp_path / "decorated.vor")
    run_python(["-m", "vor", "run", "--record", capture, "--flame", "--all-functions", "--frame-function", "step",
                str(script)])
    frames = list(vor.Reader(capture))
    c = counts(frames)
    assert len(frames) == 4  # the decorated frame function marks its frames
    assert c["custom name"] == 4 and "__main__.step" not in c  # the decorator's scope, not a second one
    # helper: 4 calls from the steps, 3 from quiet() in frames 1..3; the last quiet() runs
    # after the last frame (a C program loses its tail after the last vor_frame_mark too).
    assert "__main__.quiet" not in c and c["__main__.helper"] == 7
    for f in frames:
        step = [i for i, s in enumerate(f.scopes) if s.name == "custom name"]
        assert len(step) == 1
        inner = [s for s in f.scopes if s.name == "__main__.helper" and s.parent == step[0]]
        assert len(inner) == 1


def test_a_long_run_in_one_frame_says_how_to_keep_its_scopes(run_python, tmp_path):
    script = tmp_path / "long.py"
    script.write_text("def f():\n    pass\nfor _ in range(3000):\n    f()\n")
    proc = run_python(["-m", "vor", "run", "--record", str(tmp_path / "long.vor"), "--flame", "--all-functions",
                       "--thread-buffer", "1024", str(script)])
    assert "1 frames" in proc.stderr and "mark frames with --frame-function NAME" in proc.stderr
    c = counts(list(vor.Reader(str(tmp_path / "long.vor"))))
    assert 0 < c["__main__.f"] < 3000  # the buffer's worth, the rest dropped and counted
