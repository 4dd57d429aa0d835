#!/usr/bin/env python3
"""test_nvtx.py: VOR_NVTX=1 end to end, without a GPU or the CUDA toolkit.

    test_nvtx.py SCENARIO --vor VOR --workload NVTX_WORKLOAD --tool FAKE_NVTX_SO --tmp DIR

Each scenario runs nvtx_workload (nvtx_workload.c) with NVTX_INJECTION64_PATH naming the
fake tool (fake_nvtx.c), so NVTX's own loader in libvor dlopens it as it would Nsight
Systems' library, records a capture, and compares what the tool received (its log: ranges
pushed and popped per thread, marks) with the capture read back by `vor summary --json`:
a range per recorded scope with the scope's name and nesting, a mark per frame with its
index, every range closed on its own thread, and nothing at all when VOR_NVTX is off.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


# The workload's scopes and the NVTX depth each has (nvtx_workload.c).
DEPTH = {"frame_body": 0, "middle": 1, "leaf": 2, "worker": 0, "worker_leaf": 1, "across": 0}
# "across" ends while collection is off, so vor does not record it (a resumed session starts
# a new frame), but its range, pushed while collecting, is popped all the same.
STEPS = "before_enable enable frames 3 thread 5 frames 1 unbalanced across_disable deep 300 frames 1 shutdown"


class Env:
    def __init__(self, args, name):
        self.args = args
        self.dir = os.path.join(args.tmp, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def run(self, steps, env, command=None):
        """Runs the workload (or `command`): (stdout, vor's stderr lines, tool log lines or None,
        summary)."""
        capture = os.path.join(self.dir, "run.vor")
        log = os.path.join(self.dir, "tool.log")
        e = {k: v for k, v in os.environ.items() if not k.startswith(("VOR_", "NVTX_", "FAKE_NVTX_"))}
        e.update({"VOR_RECORD": capture, "VOR_RECORD_FLAME": "1", "FAKE_NVTX_LOG": log})
        e.update(env)
        p = subprocess.run(command or [self.args.workload] + steps.split(), env=e, capture_output=True, text=True,
                           timeout=100)
        check(p.returncode == 0, f"{(command or [self.args.workload])[0]} exited {p.returncode}: {p.stderr}")
        lines = p.stderr.splitlines()
        others = [l for l in lines if not l.startswith("vor: ")]
        check(not others, f"unexpected output on stderr: {others}")
        s = subprocess.run([self.args.vor, "summary", capture, "--json"], capture_output=True, text=True)
        check(s.returncode == 0, f"vor summary: {s.stderr}")
        tool = open(log).read().splitlines() if os.path.exists(log) else None
        return p.stdout, lines, tool, json.loads(s.stdout)


def calls(summary):
    return {s["name"]: s["calls"] for s in summary["top_by_total"]}


def check_vor_lines(lines, wanted):
    """vor's stderr: the warnings of the unbalanced end and the 300 deep scopes, and `wanted`."""
    expected = ["vor: warning [UNBALANCED_END]", "vor: warning [DEPTH_OVERFLOW]"] + wanted
    got = [l.split(":", 2)[0] + ":" + l.split(":", 2)[1] for l in lines]
    check(sorted(got) == sorted(expected), f"vor said {lines}, expected lines starting {expected}")


def check_capture(summary):
    """The capture of STEPS, whatever NVTX did: the scopes vor records are the same."""
    c = calls(summary)
    want = {"frame_body": 5, "middle": 10, "leaf": 10, "worker": 5, "worker_leaf": 5, "deep": 256}
    check(c == want, f"capture calls {c}, expected {want}")
    check(summary["frames"] == 5, f"{summary['frames']} frames")


def parse(tool):
    """(inits, {domain number: name}, pushes [(tid, dom, depth, name)], pops, marks)."""
    inits, domains, pushes, pops, marks = 0, {}, [], [], []
    for line in tool:
        w = line.split(" ", 4)
        if w[0] == "init":
            inits += 1
        elif w[0] == "domain":
            domains[int(w[1])] = line.split(" ", 2)[2]
        elif w[0] == "push":
            pushes.append((int(w[1]), int(w[2]), int(w[3]), w[4]))
        elif w[0] == "pop":
            pops.append((int(w[1]), int(w[2]), int(w[3])))
        elif w[0] == "mark":
            marks.append((int(w[1]), int(w[2]), int(w[3]), w[4]))
        else:
            raise Fail(f"tool log: {line!r}")
    return inits, domains, pushes, pops, marks


def ranges(env):
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": env.args.tool})
    check_vor_lines(lines, [])
    check_capture(summary)
    check(tool is not None, "the tool was never loaded")
    inits, domains, pushes, pops, marks = parse(tool)
    check(inits == 1 and domains == {1: "vor"}, f"init {inits}, domains {domains}")
    check(all(p[1] == 1 for p in pushes + pops + marks), "every event in the domain \"vor\"")
    # A range per scope vor recorded, with its name, and for the scopes vor dropped (deeper
    # than 256) too: NVTX has no depth limit and every push is popped.
    got = collections.Counter(p[3] for p in pushes)
    want = collections.Counter(calls(summary))
    want["deep"] = 300
    want["across"] = 1
    check(got == want, f"ranges {dict(got)}, expected {dict(want)}")
    check("before" not in got, "a scope opened while collection was off has no range")
    for tid, dom, depth, name in pushes:
        if name in DEPTH:
            check(depth == DEPTH[name], f"{name} at NVTX depth {depth}, expected {DEPTH[name]}")
    # Balanced per thread: as many pops as pushes, none with nothing open (the unbalanced
    # vor_scope_end made none), every thread back at depth 0.
    per_thread = collections.Counter(p[0] for p in pushes)
    check(per_thread == collections.Counter(p[0] for p in pops), "pops per thread equal pushes per thread")
    check(all(p[2] >= 0 for p in pops), "a pop with nothing open")
    check(len(per_thread) == 2, f"ranges on {len(per_thread)} threads, expected 2")
    worker = [t for t in per_thread if any(p[0] == t and p[3] == "worker" for p in pushes)]
    check(len(worker) == 1 and per_thread[worker[0]] == 10, "the worker's ranges on its own thread")
    # A mark per frame, on the frame thread, in order, with the frame's index as payload.
    main_tid = next(p[0] for p in pushes if p[3] == "frame_body")
    check([(m[0], m[2], m[3]) for m in marks] == [(main_tid, i, f"frame {i}") for i in range(5)], f"marks {marks}")
    # Each mark follows the ranges of its frame: frame i's mark after its frame_body's pop.
    order = [l.split()[0] + (" " + l.split(" ", 4)[4] if l.startswith("push") else "") for l in tool]
    first = order.index("push frame_body")
    check(order[first:first + 11] == ["push frame_body", "push middle", "push leaf", "pop", "pop", "push middle",
                                      "push leaf", "pop", "pop", "pop", "mark"], f"one frame's events: {order[first:first + 11]}")


def functions(env):
    out, lines, tool, summary = env.run("enable functions 3 frames 1 shutdown",
                                        {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": env.args.tool})
    check(lines == [], f"vor said {lines}")
    address = out.split()[1]
    inits, domains, pushes, pops, marks = parse(tool)
    # The exported function by its dynamic symbol; the static one, which dladdr cannot name
    # exactly, by its address (the capture names both, from the symbol table).
    want = [(0, "nvtx_instrumented_leaf"), (1, address)] * 3
    got = [(p[2], p[3]) for p in pushes if p[3] not in DEPTH]
    check(got == want, f"function ranges {got}, expected {want}")
    check(len(pops) == len(pushes), "balanced")
    c = calls(summary)
    check(c.get("nvtx_instrumented_leaf") == 3 and c.get("nvtx_static_helper") == 3, f"capture calls {c}")


PYTHON_PROGRAM = """
import threading, vor

@vor.profile
def step(n):
    with vor.scope("py_inner"):
        return sum(range(n))

def work():
    for i in range(4):
        with vor.scope("py_worker"):
            step(10)

vor.enable()
for f in range(3):
    with vor.scope("py_outer"):
        step(100)
        step(200)
    vor.frame_mark()
t = threading.Thread(target=work)
t.start()
t.join()
vor.frame_mark()
vor.shutdown()
"""


def python(env):
    """Python's scopes (vor.scope, @vor.profile) through libvor.so: the same ranges."""
    if not env.args.python:
        print("SKIP: the Python package is not built")
        sys.exit(77)
    out, lines, tool, summary = env.run("", {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": env.args.tool,
                                             "PYTHONPATH": env.args.python_path},
                                        command=[env.args.python, "-c", PYTHON_PROGRAM])
    check(lines == [], f"vor said {lines}")
    inits, domains, pushes, pops, marks = parse(tool)
    got = collections.Counter(p[3] for p in pushes)
    want = collections.Counter(calls(summary))
    check(got == want and want["py_outer"] == 3 and want["py_inner"] == 10 and want["py_worker"] == 4,
          f"ranges {dict(got)}, capture {dict(want)}")
    depth = {"py_outer": 0, "py_worker": 0, "py_inner": 2}
    for tid, dom, d, name in pushes:
        if name in depth:
            check(d == depth[name], f"{name} at NVTX depth {d}, expected {depth[name]}")
    check(collections.Counter(p[0] for p in pushes) == collections.Counter(p[0] for p in pops), "balanced per thread")
    check(len({p[0] for p in pushes}) == 2, "ranges on the main thread and the worker")
    check([(m[2], m[3]) for m in marks] == [(i, f"frame {i}") for i in range(4)], f"marks {marks}")


def off(env):
    for value in (None, "0"):
        extra = {"NVTX_INJECTION64_PATH": env.args.tool}
        if value is not None:
            extra["VOR_NVTX"] = value
        out, lines, tool, summary = env.run(STEPS, extra)
        check_vor_lines(lines, [])
        check_capture(summary)
        check(tool is None, f"VOR_NVTX={value}: NVTX was initialised: {tool}")


def no_tool(env):
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "1"})
    check_vor_lines(lines, [])
    check_capture(summary)
    check(tool is None, "no tool was named")


def bad_tool(env):
    path = os.path.join(env.dir, "no-such-tool.so")
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": path})
    check_vor_lines(lines, [])
    check_capture(summary)


def init_fails(env):
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": env.args.tool,
                                                "FAKE_NVTX_MODE": "fail_init"})
    check_vor_lines(lines, [])
    check_capture(summary)
    check(tool == ["init"], f"a tool that failed its initialisation got {tool}")


def no_pop(env):
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "1", "NVTX_INJECTION64_PATH": env.args.tool,
                                                "FAKE_NVTX_MODE": "no_pop"})
    check_vor_lines(lines, [])
    check_capture(summary)
    inits, domains, pushes, pops, marks = parse(tool)
    check(pops == [] and len(pushes) == sum(calls(summary).values()) + 300 - 256 + 1 and len(marks) == 5,
          f"{len(pushes)} pushes, {len(pops)} pops, {len(marks)} marks")


def bad_value(env):
    out, lines, tool, summary = env.run(STEPS, {"VOR_NVTX": "yes", "NVTX_INJECTION64_PATH": env.args.tool})
    check_vor_lines(lines, ["vor: warning [BAD_ENVIRONMENT]"])
    check(any('VOR_NVTX="yes"' in l for l in lines), f"the warning names the variable: {lines}")
    check_capture(summary)
    check(tool is None, "VOR_NVTX=yes is off")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--vor", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--tool", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--python", default="")
    ap.add_argument("--python-path", default="")
    args = ap.parse_args()
    fn = globals().get(args.scenario)
    if fn is None:
        print(f"test_nvtx.py: no scenario {args.scenario}", file=sys.stderr)
        return 2
    try:
        fn(Env(args, args.scenario))
    except Fail as e:
        print(f"FAIL nvtx {args.scenario}: {e}", file=sys.stderr)
        return 1
    print(f"ok nvtx {args.scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
