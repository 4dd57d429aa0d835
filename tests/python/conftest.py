"""Fixtures of the Python package's tests.

`record` runs a function inside a vor session that writes a real capture (VOR_RECORD, flame
frames on) and returns the frames read back by vor.Reader; `run_python` runs a child
python3 with the package importable (what `python -m vor run` and writers being tailed
need). `vor_cli` is the built `vor` command. ctest sets the paths (tests/python/CMakeLists.txt);
run by hand, they default to build/native.
"""

import os
import subprocess
import sys

import pytest

import vor
from vor._run import _start_session as start_session

SOURCE_DIR = os.environ.get("VOR_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("VOR_BUILD_DIR") or os.path.join(SOURCE_DIR, "build", "native")


@pytest.fixture
def vor_cli():
    path = os.environ.get("VOR_CLI") or os.path.join(BUILD_DIR, "bin", "vor")
    assert os.access(path, os.X_OK), f"the vor command is not built: {path}"
    return path


@pytest.fixture
def c_example():
    path = os.environ.get("VOR_C_EXAMPLE") or os.path.join(BUILD_DIR, "bin", "training_loop")
    assert os.access(path, os.X_OK), f"the C example is not built: {path}"
    return path


def child_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for name in list(env):
        if name.startswith("VOR_RECORD") or name.startswith("VOR_TRACE"):
            del env[name]
    env.update(extra or {})
    return env


@pytest.fixture
def run_python():
    def run(args, env=None, check=True, **kwargs):
        proc = subprocess.run([sys.executable] + list(args), env=child_env(env), capture_output=True, text=True,
                              timeout=240, **kwargs)
        if check and proc.returncode != 0:
            raise AssertionError(f"python {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run


class Session:
    """A vor session writing `path`, as a C program started with VOR_RECORD would."""

    def __init__(self, path, flame=True, extra_env=None):
        self.path = str(path)
        self.env = {"VOR_RECORD": self.path}
        if flame:
            self.env["VOR_RECORD_FLAME"] = "1"
        self.env.update(extra_env or {})

    def __enter__(self):
        start_session(self.env)  # what python -m vor run does: the variables for this session only
        return self

    def __exit__(self, *exc):
        vor.shutdown()

    def frames(self):
        return list(vor.Reader(self.path))


@pytest.fixture
def record(tmp_path):
    """record(fn) runs fn() in a recording session (fn marks its own frames; one more frame
    is marked after it) and returns the frames read back."""
    count = [0]

    def run(fn, flame=True, extra_env=None):
        count[0] += 1
        with Session(tmp_path / f"capture{count[0]}.vor", flame, extra_env) as session:
            fn()
            vor.frame_mark()
        return session.frames()

    return run


def scopes_named(frames, name):
    return [s for f in frames for s in f.scopes if s.name == name and not s.open]
