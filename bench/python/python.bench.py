"""python.bench.py: what a Python scope costs, against floors measured in the same run
(docs/PERFORMANCE.md records the figures). Run by `make bench` (scripts/bench.sh) with
PYTHONPATH=build/native/python; asserts nothing.

1. @vor.profile on an empty function, against the same function undecorated.
2. `with vor.scope("x"):` against an empty `with` of trivial context managers: a Python
   class instance made per use, a pre-made one, and a pre-made C one (threading.Lock).
3. python -m vor run --all-functions (a flame capture of every call; and the same writing
   no capture, to show what the capture costs) against python -m cProfile on the same
   script (workload.py: only Python calls, then Python calls that call builtins), per
   Python call, each against the script run plain, in CPU time.

Timings: batches of 10,000 calls, interleaved, frames marked between batches (a frame
holds at most one batch: no scope is dropped); the figure per variant is the median of
the batches, so a preempted batch does not count. The machine is shared: compare the
ratios and differences within one run, not the absolute figures across runs.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import vor

BATCH = 10_000
ROUNDS = 200
HERE = os.path.dirname(os.path.abspath(__file__))


def empty():
    pass


profiled_empty = vor.profile(empty)


class Trivial:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def loop_call(f):
    def run():
        for _ in range(BATCH):
            f()

    return run


def with_new_trivial():
    for _ in range(BATCH):
        with Trivial():
            pass


def with_trivial_instance(cm=Trivial()):
    for _ in range(BATCH):
        with cm:
            pass


def with_lock(cm=threading.Lock()):
    for _ in range(BATCH):
        with cm:
            pass


def with_vor_scope():
    for _ in range(BATCH):
        with vor.scope("x"):
            pass


def measure(variants):
    """Median ns per call of each variant, batches interleaved."""
    samples = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, run in variants.items():
            t = time.perf_counter_ns()
            run()
            samples[name].append((time.perf_counter_ns() - t) / BATCH)
            vor.frame_mark()
    return {name: statistics.median(v) for name, v in samples.items()}


def in_process():
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VOR_RECORD"] = os.path.join(tmp, "bench.vor")
        os.environ["VOR_RECORD_FLAME"] = "1"
        vor.enable()
        for k in ("VOR_RECORD", "VOR_RECORD_FLAME"):
            del os.environ[k]
        calls = measure({"plain": loop_call(empty), "profiled": loop_call(profiled_empty)})
        withs = measure({
            "Trivial()": with_new_trivial,
            "trivial instance": with_trivial_instance,
            "threading.Lock": with_lock,
            "vor.scope": with_vor_scope,
        })
        counters = vor.counters()
        vor.shutdown()
    print("recording flame frames into a capture; median of %d batches of %d" % (ROUNDS, BATCH))
    d = calls["profiled"] - calls["plain"]
    print(f"  empty function call                           {calls['plain']:8.1f} ns")
    print(f"  @vor.profile'd empty function call            {calls['profiled']:8.1f} ns   "
          f"+{d:.1f} ns (target <= +80 ns)")
    scope = withs["vor.scope"]
    for floor in ("Trivial()", "trivial instance", "threading.Lock"):
        print(f"  empty with {floor + ':':<34} {withs[floor]:8.1f} ns")
    print(f"  with vor.scope(\"x\")                           {scope:8.1f} ns   "
          + ", ".join(f"{scope - withs[f]:+.1f} ns vs {f}" for f in ("Trivial()", "trivial instance", "threading.Lock"))
          + " (target <= +120 ns)")
    print(f"  scopes recorded {counters['scopes_recorded']}, dropped {counters['scopes_dropped']}; "
          f"one empty C scope: {vor.empty_span_ns():.1f} ns")


def run_workload(command, steps, mode):
    env = dict(os.environ)
    env.pop("VOR_RECORD", None)
    out = subprocess.run(command + [os.path.join(HERE, "workload.py"), str(steps), mode], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1])


def whole_program(mode, steps, repeats=9):
    with tempfile.TemporaryDirectory() as tmp:
        variants = {
            "plain": [sys.executable],
            "cProfile": [sys.executable, "-m", "cProfile", "-o", os.path.join(tmp, "prof.out")],
            "vor --all-functions": [sys.executable, "-m", "vor", "run", "--record", os.path.join(tmp, "run.vor"),
                                    "--flame", "--all-functions", "--frame-function", "step"],
            "  the same, no capture": [sys.executable, "-m", "vor", "run", "--all-functions", "--frame-function", "step"],
        }
        times = {name: [] for name in variants}
        calls = 0
        for _ in range(repeats):  # interleaved, so a busy spell hits all three alike
            for name, command in variants.items():
                calls, seconds = run_workload(command, steps, mode)
                times[name].append(seconds)
    plain = statistics.median(times["plain"])
    print(f"whole program, workload.py {steps} {mode}: {calls} Python calls; CPU time of the steps, "
          f"median of {repeats} runs each")
    per_call = {}
    for name in variants:
        t = statistics.median(times[name])
        per_call[name] = (t - plain) / calls * 1e9
        extra = "" if name == "plain" else f"   +{per_call[name]:.1f} ns per Python call"
        print(f"  {name:<22} {t * 1e3:9.1f} ms{extra}")
    ratio = per_call["vor --all-functions"] / per_call["cProfile"]
    bare = per_call["  the same, no capture"] / per_call["cProfile"]
    print(f"  vor --all-functions per-call overhead = {ratio:.2f}x cProfile's (target <= 1.0x); "
          f"{bare:.2f}x without writing the capture")


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]} ({sys.executable}), vor {vor.version}")
    in_process()
    whole_program("calls", 150)
    whole_program("mixed", 1500)
