#!/usr/bin/env python3
"""test_cli_e2e.py: end-to-end tests of the `vor` command on real captures.

    test_cli_e2e.py TEST --vor PATH --workload PATH --dump PATH --tmp DIR

TEST is one of: summary csv folded chrome tail tail_rerun errors truncated outputs inputs
text true_stacks help (each a ctest test, cli_e2e_<TEST>): a unittest TestCase whose tests
check one behaviour each, so that one failure does not hide the others (-k WORD runs only
the tests whose name holds WORD). Captures come from cli_capture_workload (tests/cli/capture_workload.c)
run with VOR_RECORD=path VOR_RECORD_FLAME=1; the expected numbers are computed here from
capture_dump --tsv's listing of the same file (the reader's output, printed as text), with
algorithms of our own: parents by a backward pass over each thread's scopes (the format
spec's definition) rather than the CLI's stack, exact percentiles by sorting, sums with
math.fsum. Only the standard library is used.

Exit status: 0 passed, 1 failed (unittest's report says which tests and why).
"""
import argparse
import bisect
import csv
import io
import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, equal  # noqa: E402

ARGS = None


# ---- Running things -------------------------------------------------------------------

def run(cmd, env=None, stdin=None, timeout=120, raw=False, **kw):
    p = subprocess.run(cmd, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, **kw)
    if raw:
        return p.returncode, p.stdout, p.stderr
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def vor(*args, **kw):
    return run([ARGS.vor, *args], **kw)


def tmp(name):
    os.makedirs(ARGS.tmp, exist_ok=True)
    return os.path.join(ARGS.tmp, name)


def make_capture(name, frames, flame=True, extra_env=None, delay_ms=0, odd_names=False, options=()):
    path = tmp(name)
    if os.path.exists(path):
        os.remove(path)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("VOR_"):
            del env[k]
    env["VOR_RECORD"] = path
    if flame:
        env["VOR_RECORD_FLAME"] = "1"
    env.update(extra_env or {})
    cmd = [ARGS.workload, str(frames)] + (["--delay-ms", str(delay_ms)] if delay_ms else [])
    cmd += ["--odd-names"] if odd_names else []
    cmd += list(options)
    rc, out, err = run(cmd, env=env)
    check(rc == 0, f"workload failed ({rc}): {err}")
    check(os.path.getsize(path) > 0, "workload wrote an empty capture")
    return path


# ---- The capture as the reader sees it (capture_dump --tsv), the reading rules ---------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reading_rules import Dump, Rules, nearest_rank, plausible, PLACEHOLDER  # noqa: E402


def Capture(path):
    return Dump(ARGS.dump, path)


# The stacks capture_workload.c makes (thread names as it sets them).
WORKLOAD_STACKS = {"main;run", "main;run;frame_body", "main;run;frame_body;physics",
                   "main;run;frame_body;physics;collide", "main;run;frame_body;render", "worker;load",
                   "worker;load;decode"}


def parse_folded(text):
    out = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        check(stack and value.isdigit(), f"bad folded line {line!r}")
        check(stack not in out, f"duplicate stack {stack!r}")
        out[stack] = int(value)
    return out


# ---- Tests ----------------------------------------------------------------------------------

FRAMES = 200


class Group(unittest.TestCase):
    """One ctest test: a group of tests sharing what its setup() makes once (a capture, its
    listing, an export); setup()'s local variables become the class's attributes."""

    @staticmethod
    def setup():
        return {}

    @classmethod
    def setUpClass(cls):
        for name, value in cls.setup().items():
            setattr(cls, name, staticmethod(value) if callable(value) else value)


class Summary(Group):
    """cli_e2e_summary."""

    @staticmethod
    def setup():
        path = make_capture("summary.vor", FRAMES)
        cap = Capture(path)
        equal(cap.end["status"], "ok", "the dump read the capture")
        rc, out, err = vor("summary", path, "--json")
        equal(rc, 0, f"summary --json exit status (stderr {err!r})")
        s = json.loads(out)
        return locals()

    def test_options_before_or_after_the_file(self):
        path, s = self.path, self.s
        # Options before the file give the same answer.
        rc2, out2, _ = vor("summary", "--json", path)
        equal(rc2, 0, "summary --json FILE")
        equal(json.loads(out2), s, "options before or after the file")

    def test_header_fields(self):
        path, cap, s = self.path, self.cap, self.s
        equal(s["file"], path, "file")
        equal(s["format_version"], cap.info["version"], "format_version")
        equal(s["producer"], cap.info["producer"], "producer")
        equal(s["process"], cap.info["process"], "process")
        equal(s["pid"], cap.info["pid"], "pid")
        equal(s["flame_requested"], True, "flame_requested")
        equal(s["finished"], True, "finished")
        equal(s["wall_epoch_ns"], cap.info["wall"], "wall_epoch_ns")
        check(s["wall_clock_start"].endswith("Z") and "T" in s["wall_clock_start"], "wall_clock_start is ISO 8601 UTC")
        equal(s["frames"], FRAMES, "frames")
        equal(s["first_index"], cap.frames[0]["index"], "first_index")
        equal(s["last_index"], cap.frames[-1]["index"], "last_index")
        start = min(f["start"] for f in cap.frames)
        end = max(f["start"] + f["dur"] for f in cap.frames)
        equal(s["start_ns"], start, "start_ns")
        equal(s["end_ns"], end, "end_ns")
        equal(s["span_ns"], end - start, "span_ns")
        equal(s["flame_frames"], sum(f["has_flame"] for f in cap.frames), "flame_frames")
        equal(s["scopes"], sum(f["n_scopes"] for f in cap.frames), "scopes")
        equal(s["dropped_scopes"], sum(f["dropped"] for f in cap.frames), "dropped_scopes")
        equal(s["overhead_ns"], sum(f["overhead"] for f in cap.frames), "overhead_ns")

    def test_metrics(self):
        cap, s = self.cap, self.s
        # Metrics, computed here.
        equal([m["name"] for m in s["metrics"]], [cap.columns[i]["name"] for i in sorted(cap.columns)], "metric names")
        for m in s["metrics"]:
            cid = m["id"]
            equal(m["unit"], cap.columns[cid]["unit"], f"{m['name']} unit")
            equal(m["system"], bool(cap.columns[cid]["system"]), f"{m['name']} system")
            vals = [f["values"][cid] for f in cap.frames if cid in f["values"]]
            if cid == 0 and s["compensation"]["on"]:  # frame time less the frame's overhead
                vals = [v * ((f["dur"] - min(f["overhead"], f["dur"])) / f["dur"]) if f["dur"] else v
                        for f, v in ((f, f["values"][0]) for f in cap.frames if 0 in f["values"])]
            equal(m["compensated"], cid == 0 and s["compensation"]["on"], f"{m['name']} compensated")
            finite = [v for v in vals if math.isfinite(v)]
            equal(m["frames"], len(finite), f"{m['name']} frames")
            equal(m["nonfinite"], len(vals) - len(finite), f"{m['name']} nonfinite")
            equal(m["min"], min(finite), f"{m['name']} min")
            equal(m["max"], max(finite), f"{m['name']} max")
            equal(m["p95"], nearest_rank(finite, 95), f"{m['name']} p95")
            equal(m["p95_exact"], True, f"{m['name']} p95_exact")
            mean = math.fsum(finite) / len(finite)
            check(abs(m["mean"] - mean) <= 1e-12 * max(1.0, abs(mean)), f"{m['name']} mean {m['mean']} vs {mean}")
        by_name = {m["name"]: m for m in s["metrics"]}
        equal(by_name["score"]["unit"], "points", "score unit")
        equal(by_name["loss"]["unit"], "nats", "loss unit")
        equal(by_name["loss"]["frames"], FRAMES - FRAMES // 2 - 2, "loss: first appears mid-run, two non-finite")
        equal(by_name["loss"]["nonfinite"], 2, "loss non-finite values")
        equal(by_name["score"]["max"], 1.5 * (FRAMES - 1), "score max")

    def test_scopes_by_the_reading_rules(self):
        cap, s = self.cap, self.s
        # Scopes: calls, total, self, mean and max by name, by the reading rules (computed here).
        rules = Rules(cap)
        per = {n: [e["calls"], e["total"], e["self"]] for n, e in rules.names.items()}
        equal(per["render"][0], FRAMES + (FRAMES + 1) // 2, "render calls")
        equal(per["run"][0], 1, "run calls")
        for key, field in (("top_by_total", 1), ("top_by_self", 2)):
            rows = s[key]
            equal(len(rows), min(10, len(per)), f"{key} rows")
            want = sorted(per, key=lambda n: (-per[n][field], n))
            equal([r["name"] for r in rows], want[:len(rows)], f"{key} order")
            for r in rows:
                equal([r["calls"], r["total_ns"], r["self_ns"]], per[r["name"]], f"{key} {r['name']}")
                equal(r["max_ns"], rules.names[r["name"]]["max"], f"{key} {r['name']} max")
                check(abs(r["mean_ns"] - rules.mean(r["name"])) <= 1e-9 * rules.mean(r["name"]), f"{r['name']} mean")
                check(r["self_ns"] >= 0 and r["total_ns"] >= r["self_ns"], f"{r['name']}: self within total")
        equal(s["scope_notes"]["parent_not_recorded"], rules.parent_unknown, "scopes whose parent was not recorded")
        equal(s["scope_notes"]["children_longer"], 0, "no child longer than its parent")

    def test_time_inside_the_frames(self):
        cap, s = self.cap, self.s
        # Time inside the frames: no name has more than the frames it ran in.
        span = sum(f["dur"] for f in cap.frames if f["has_flame"])
        for r in s["top_by_total"]:
            check(r["total_ns"] <= span, f"{r['name']}: {r['total_ns']} ns in {span} ns of frames")

    def test_top_option(self):
        path = self.path
        rc, out, err = vor("summary", path, "--top", "2", "--json")
        equal(len(json.loads(out)["top_by_self"]), 2, "--top 2")

    def test_text_form(self):
        path = self.path
        # The text form: the same facts for people.
        rc, text, err = vor("summary", path)
        equal(rc, 0, "summary exit status")
        equal(err, "", "summary stderr (not a terminal: no progress)")
        for needle in ("frames    200 (index 0 to 199)", "score", "points", "loss", "nats", "2 non-finite skipped",
                       "top 7 scopes by total time", "top 7 scopes by self time", "frame_body", "ended     properly"):
            check(needle in text, f"summary text lacks {needle!r}:\n{text}")

    def test_metrics_only(self):
        s = self.s
        # Metrics only: no scope tables.
        plain = make_capture("metrics_only.vor", 50, flame=False)
        rc, out, err = vor("summary", plain, "--json")
        equal(rc, 0, "metrics-only summary")
        s = json.loads(out)
        equal((s["flame_requested"], s["flame_frames"], s["scopes"], s["top_by_total"]), (False, 0, 0, []),
              "metrics-only summary scopes")
        rc, text, err = vor("summary", plain)
        check("top " not in text, "no top tables without flame frames")


class Csv(Group):
    """cli_e2e_csv."""

    @staticmethod
    def setup():
        path = make_capture("csv.vor", FRAMES)
        cap = Capture(path)
        out_path = tmp("csv.csv")
        rc, out, err = vor("export", path, "--format", "csv", "-o", out_path)
        equal((rc, out, err), (0, "", ""), "export csv -o")
        with open(out_path, newline="") as fh:
            text = fh.read()
        rows = list(csv.reader(io.StringIO(text)))
        ids = sorted(cap.columns)
        header = ["index", "start_ms", "duration_ms"] + [
            f"{cap.columns[i]['name']} ({cap.columns[i]['unit']})" if cap.columns[i]["unit"] else cap.columns[i]["name"]
            for i in ids]
        loss = header.index("loss (nats)")
        return locals()

    def test_o_and_stdout_agree(self):
        path, text = self.path, self.text
        rc, stdout_text, err = vor("export", "--format=csv", path)
        equal(rc, 0, "export csv to stdout")
        equal(stdout_text, text, "stdout and -o give the same CSV")

    def test_header_and_rows(self):
        rows, header = self.rows, self.header
        equal(rows[0], header, "CSV header")
        equal(len(rows), FRAMES + 1, "CSV rows")
        check(all(len(r) == len(header) for r in rows), "every row has every column")

    def test_cells(self):
        cap, rows, ids = self.cap, self.rows, self.ids
        for r, f in zip(rows[1:], cap.frames):
            equal(int(r[0]), f["index"], "index")
            equal(r[1], f"{f['start'] // 1000000}.{f['start'] % 1000000:06d}", "start_ms")
            equal(r[2], f"{f['dur'] // 1000000}.{f['dur'] % 1000000:06d}", "duration_ms")
            for k, cid in enumerate(ids):
                cell = r[3 + k]
                if cid not in f["values"]:
                    equal(cell, "", f"frame {f['index']} column {cid} absent")
                    continue
                want = f["values"][cid]
                got = float(cell)
                check(got == want or (math.isnan(got) and math.isnan(want)), f"frame {f['index']} column {cid}: {cell} vs {want}")

    def test_metric_appearing_mid_run(self):
        rows, loss = self.rows, self.loss
        # The metric that first appears mid-run: empty cells before, values after.
        equal([r[loss] == "" for r in rows[1:]], [i < FRAMES // 2 for i in range(FRAMES)], "loss cells empty before mid-run")
        equal(rows[FRAMES - 1][loss], "nan", "NaN cell")
        equal(rows[FRAMES - 2][loss], "inf", "infinity cell")


class Folded(Group):
    """cli_e2e_folded."""

    @staticmethod
    def setup():
        path = make_capture("folded.vor", FRAMES)
        cap = Capture(path)
        want = Rules(cap).folded
        return locals()

    def test_stacks_are_the_reading_rules(self):
        path, want = self.path, self.want
        rc, out, err = vor("export", path, "--format", "folded")
        equal(rc, 0, "export folded")
        check(err == "" or "parent was not recorded" in err, f"export folded stderr: {err!r}")
        got = parse_folded(out)
        equal(sorted(got), sorted(want), "folded stacks")
        for k in got:
            check(plausible(k, WORKLOAD_STACKS), f"a stack the workload never makes: {k!r}")
        for k in want:
            equal(got[k], want[k], f"self time of {k}")
        equal(out.splitlines(), sorted(out.splitlines()), "lines in name order")

    def test_no_thread(self):
        path, cap = self.path, self.cap
        rc, out, err = vor("export", "--no-thread", path, "-f", "folded")
        equal(rc, 0, "export folded --no-thread")
        got = parse_folded(out)
        equal(got, Rules(cap, thread_roots=False).folded, "folded --no-thread")

    def test_max_stacks(self):
        path, want = self.path, self.want
        # A tiny cap (room for the threads, not their scopes): fewer stacks, same total, a note.
        rc, out, err = vor("export", path, "--format", "folded", "--max-stacks", "8")
        equal(rc, 0, "folded --max-stacks 8")
        check("--max-stacks" in err and path in err, f"cap note: {err!r}")
        check(len(parse_folded(out)) < len(want), "fewer stacks under the cap")
        equal(sum(parse_folded(out).values()), sum(want.values()), "total kept under the cap")

    def test_metrics_only_is_refused(self):
        plain = make_capture("folded_plain.vor", 10, flame=False)
        rc, out, err = vor("export", plain, "--format", "folded")
        equal(rc, 2, "folded of a metrics-only capture")
        equal(err, f"vor export: {plain}: no flame frames in this capture (record with VOR_RECORD_FLAME=1)\n", "message")


def ns_of(us):
    """'12.345' microseconds -> 12345 ns, exactly."""
    text = str(us) if not isinstance(us, str) else us
    neg = text.startswith("-")
    whole, _, frac = text.lstrip("-").partition(".")
    ns = int(whole) * 1000 + int((frac + "000")[:3])
    return -ns if neg else ns


def load_trace(text):
    # Keep the exact decimals of ts/dur: parse floats as strings.
    return json.loads(text, parse_float=lambda s: s, parse_int=lambda s: int(s))


class Chrome(Group):
    """cli_e2e_chrome."""

    @staticmethod
    def setup():
        trace_path = tmp("live.json")
        if os.path.exists(trace_path):
            os.remove(trace_path)
        path = make_capture("chrome.vor", FRAMES, extra_env={"VOR_TRACE": trace_path})
        cap = Capture(path)
        rc, exported, err = vor("export", path, "--format", "chrome")
        equal(rc, 0, f"export chrome ({err!r})")
        events = load_trace(exported)
        names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        # vor's additions are categories, not args (speedscope would fold args into names):
        # "vor.frame,index:N,..." for frames, "vor,src:FILE:LINE" for scopes.
        frames = [e for e in events if e["ph"] == "X" and e.get("cat", "").split(",")[0] == "vor.frame"]
        xs = [e for e in events if e["ph"] == "X" and e.get("cat", "").split(",")[0] == "vor"]
        return locals()

    def test_array_of_one_process_and_its_threads(self):
        cap, events, names = self.cap, self.events, self.names
        check(isinstance(events, list), "the array format")
        pid = cap.info["pid"]
        check(all(e["pid"] == pid for e in events), "one process")
        check(sorted(names.values()) == ["frames", "main", "worker"], f"thread names {names}")

    def test_one_frame_event_per_frame(self):
        cap, frames = self.cap, self.frames
        equal(len(frames), FRAMES, "one frame event per frame")
        check(all("args" not in e for e in frames), "frame events without args (their figures are categories)")
        equal([int(e["cat"].split(",")[1].removeprefix("index:")) for e in frames], [f["index"] for f in cap.frames],
              "frame indices")

    def test_one_event_per_scope_and_value(self):
        cap, events, xs = self.cap, self.events, self.xs
        equal(len(xs), sum(1 for _ in cap.scopes()), "one X event per scope")
        check(all("args" not in e for e in xs), "scope events without args")
        check(all(",src:" in e["cat"] and e["cat"].split(":")[-1].split(",")[0].isdigit() for e in xs),
              "each scope's source in its categories")
        counters = [e for e in events if e["ph"] == "C"]
        equal(len(counters), sum(1 for f in cap.frames for v in f["values"].values() if math.isfinite(v)),
              "one counter per finite value")

    def test_nesting_per_thread(self):
        frames, xs, names = self.frames, self.xs, self.names
        # Nesting per thread: intervals are disjoint or contained. Only scopes that lie within
        # one frame: the capture maps the start of a scope that spans many frames with the
        # clock anchors of the frame it ends in, so its start can be off by microseconds.
        spans = sorted((ns_of(e["ts"]), ns_of(e["ts"]) + ns_of(e["dur"])) for e in frames)
        def in_one_frame(ts, end):
            k = bisect.bisect_right(spans, (ts, float("inf"))) - 1
            return k >= 0 and spans[k][0] <= ts and end <= spans[k][1]
        by_tid = {}
        for e in xs:
            ts, dur = ns_of(e["ts"]), ns_of(e["dur"])
            if in_one_frame(ts, ts + dur):
                by_tid.setdefault(e["tid"], []).append((ts, dur, e["name"]))
        equal(sorted(names[t] for t in by_tid), ["main", "worker"], "scopes on main and worker")
        for tid, evs in by_tid.items():
            evs.sort(key=lambda x: (x[0], -x[1]))
            stack = []
            for ts, dur, name in evs:
                while stack and stack[-1][0] + stack[-1][1] <= ts:
                    stack.pop()
                if stack:
                    check(ts + dur <= stack[-1][0] + stack[-1][1], f"{name} overlaps its parent {stack[-1][2]} on {tid}")
                stack.append((ts, dur, name))
        main = [n for t, n in names.items() if n == "main"]
        check(main, "main thread")

    def test_export_is_the_live_trace(self):
        trace_path, out = self.trace_path, self.exported
        # The live VOR_TRACE of the same run: the same bytes (one writer for both).
        with open(trace_path) as fh:
            equal(out, fh.read(), "export = live VOR_TRACE of the same run")
        print("export matches the live trace byte for byte")


def default_signals():
    """In a child: SIGINT, SIGTERM and SIGHUP back to their defaults. A job started in the
    background (or under nohup) inherits some of them ignored, and vor keeps an inherited
    "ignore" as a shell user expects, so without this the signal tests would test nothing."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def popen_vor(cmd, **kwargs):
    return subprocess.Popen(cmd, preexec_fn=default_signals, **kwargs)


def read_stderr_until(proc, text, timeout):
    """Reads the process's stderr until `text` has appeared; returns what was read."""
    got = b""
    deadline = time.time() + timeout
    while time.time() < deadline and text.encode() not in got:
        r, _, _ = select.select([proc.stderr], [], [], 0.1)
        if r:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            got += chunk
    return got.decode()


def read_lines_until(proc, want, timeout):
    """Reads stdout lines until `want(lines)` or timeout; returns the lines."""
    lines = []
    buf = b""
    deadline = time.time() + timeout
    while time.time() < deadline and not want(lines):
        r, _, _ = select.select([proc.stdout], [], [], 0.1)
        if r:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            *done, buf = buf.split(b"\n")
            lines += [d.decode() for d in done]
    return lines


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failure("tail did not stop on SIGINT")
    err = proc.stderr.read().decode()
    return rc, err


def frame_indices(lines):
    return [int(l.split()[1]) for l in lines if l.startswith("frame ")]


class Tail(Group):
    """cli_e2e_tail."""

    @staticmethod
    def setup():
        n = 60
        path = make_capture("tail.vor", n)  # a finished capture (the first test writes its own)
        return locals()

    def test_waits_for_the_file_then_follows(self):
        n = self.n
        path = tmp("tail_wait.vor")
        if os.path.exists(path):
            os.remove(path)
        # Started before the file exists: it waits, then prints frames while they are written.
        # The writer starts only once tail has said it is waiting, however slow its start.
        tail = popen_vor([ARGS.vor, "tail", path, "--from-start", "--interval", "20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        early_err = ""
        try:
            early_err = read_stderr_until(tail, "waiting for the file to appear", 30)
            env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
            env.update(VOR_RECORD=path, VOR_RECORD_FLAME="1")
            writer = subprocess.Popen([ARGS.workload, str(n), "--delay-ms", "50"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            early = read_lines_until(tail, lambda ls: len(frame_indices(ls)) >= 5, 20)
            check(writer.poll() is None, "frames arrived while the writer was still running")
            rest = read_lines_until(tail, lambda ls: (n - 1) in frame_indices(early + ls), 30)
            writer.wait(timeout=30)
            lines = early + rest
            equal(frame_indices(lines), list(range(n)), "every frame once, in order")
            check(all("score=" in l for l in lines), "metrics on every line")
            check(all("scopes=" in l for l in lines), "scope counts of flame frames")
            check("loss=" in lines[-1] and "loss=" not in lines[0], "a metric appearing mid-run")
        finally:
            rc, err = stop(tail)
        err = early_err + err
        equal(rc, 0, "tail exits 0 on SIGINT")
        equal(err.count("waiting for the file to appear"), 1, f"one note while waiting: {err!r}")

    def test_last_frames_then_follow(self):
        path, n = self.path, self.n
        # Default: the last 10 frames, then follow; -n N chooses how many.
        tail = popen_vor([ARGS.vor, "tail", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = read_lines_until(tail, lambda ls: len(ls) >= 10, 10)
        time.sleep(0.3)
        lines += read_lines_until(tail, lambda ls: False, 0.3)
        rc, err = stop(tail)
        equal((rc, err), (0, ""), "tail of a finished capture")
        equal(frame_indices(lines), list(range(n - 10, n)), "the last 10 frames")

    def test_n_option(self):
        path, n = self.path, self.n
        tail = popen_vor([ARGS.vor, "tail", "-n", "3", path, "--interval", "10"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        lines = read_lines_until(tail, lambda ls: len(ls) >= 3, 10)
        rc, err = stop(tail)
        equal(frame_indices(lines), [n - 3, n - 2, n - 1], "-n 3")

    def test_corrupt_capture(self):
        path = self.path
        # A corrupt capture ends the command with status 2.
        bad = broken_copy(path, "tail_corrupt.vor")
        rc, out, err = vor("tail", bad, "--from-start", timeout=20)
        equal(rc, 2, f"tail of a corrupt capture ({err!r})")
        check(err.startswith(f"vor tail: {bad}: "), f"message names the file: {err!r}")

    def test_new_run_read_from_its_start(self):
        n = self.n
        path = make_capture("tail_new_run.vor", n)
        # A new run writing the same path: read again from its start.
        tail = popen_vor([ARGS.vor, "tail", path, "-n", "1", "--interval", "20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        lines = read_lines_until(tail, lambda ls: len(ls) >= 1, 10)
        env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
        env.update(VOR_RECORD=path)
        rc, _, _ = run([ARGS.workload, "3", "--delay-ms", "20"], env=env)
        equal(rc, 0, "second run")
        lines += read_lines_until(tail, lambda ls: len(frame_indices(ls)) >= 3, 10)
        rc, err = stop(tail)
        equal(rc, 0, "tail across a new run")
        equal(frame_indices(lines), [n - 1, 0, 1, 2], "the old last frame, then the new run from its start")
        check("truncated or replaced; reading it from the start" in err, f"note: {err!r}")


def header_bytes(data):
    """The header's size: docs/FORMAT.md section 2 (1.1 has a check after B)."""
    body = int.from_bytes(data[12:16], "little")
    return (20 if int.from_bytes(data[10:12], "little") >= 1 else 16) + body + 4


def record_offsets(data):
    """(offset, length) of every record: the layout of docs/FORMAT.md sections 1-3 (1.1)."""
    pos = header_bytes(data)
    out = []
    while pos + 10 <= len(data):
        n = 10 + (int.from_bytes(data[pos:pos + 4], "little") & 0x7FFFFFFF)
        if pos + n > len(data):
            break
        out.append((pos, n))
        pos += n
    return out


def corrupt_copy(path, name):
    """A copy with one damaged record in the middle; returns (path, the record's offset)."""
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    recs = record_offsets(data)
    check(len(recs) > 4, "records to corrupt")
    pos, n = recs[len(recs) // 2]
    for i in range(pos + n - 6, pos + n):  # the end of the record's payload
        data[i] ^= 0x5A
    out = tmp(name)
    with open(out, "wb") as fh:
        fh.write(data)
    return out, pos


def broken_copy(path, name):
    """A copy whose header is damaged: an error for every command (a damaged record is not)."""
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    data[header_bytes(data) - 8] ^= 0x5A  # in the header body, before its check
    out = tmp(name)
    with open(out, "wb") as fh:
        fh.write(data)
    return out


class Errors(Group):
    """cli_e2e_errors."""

    @staticmethod
    def setup():
        path = make_capture("errors.vor", 30)
        return locals()

    def test_missing_file(self):
        missing = tmp("no-such.vor")
        rc, out, err = vor("summary", missing)
        equal((rc, out, err), (2, "", f"vor summary: {missing}: No such file or directory\n"), "missing file")
        rc, out, err = vor("export", missing, "--format", "csv")
        equal((rc, err), (2, f"vor export: {missing}: No such file or directory\n"), "export: missing file")

    def test_not_a_capture(self):
        text_file = tmp("not-a-capture.txt")
        with open(text_file, "w") as fh:
            fh.write("this is a text file, not a capture\n" * 4)
        rc, out, err = vor("summary", text_file)
        equal(rc, 2, "not a capture")
        check(err.startswith(f"vor summary: {text_file}: ") and err.count("\n") == 1, f"one line naming the file: {err!r}")

        rc, out, err = vor("tail", text_file, timeout=20)
        equal(rc, 2, "tail of a file that is not a capture")
        check(err.startswith(f"vor tail: {text_file}: ") and err.count("\n") == 1, f"one line naming the file: {err!r}")

    def test_directory(self):
        rc, out, err = vor("summary", ARGS.tmp)
        equal((rc, err), (2, f"vor summary: {ARGS.tmp}: is a directory, not a capture\n"), "a directory")

    def test_empty_file(self):
        empty = tmp("empty.vor")
        open(empty, "w").close()
        rc, out, err = vor("summary", empty)
        equal((rc, err), (2, f"vor summary: {empty}: empty file, not a capture (yet?)\n"), "empty file")

    def test_damaged_record(self):
        path = self.path
        # A damaged record (format 1.1) costs that record only: the command reads on and says
        # where the damage was.
        bad, bad_at = corrupt_copy(path, "corrupt.vor")
        for cmd in (["summary", bad], ["export", bad, "--format", "csv"], ["export", bad, "--format", "folded"]):
            rc, out, err = vor(*cmd)
            equal(rc, 0, f"{cmd[0]} of a damaged capture")
            note = f"vor {cmd[0]}: {bad}: damaged record at byte {bad_at} "
            # (and, while the writer lists no open scopes, the folded export's note about them)
            lines = [l for l in err.splitlines() if "their parent was not recorded" not in l]
            check(lines and all(line.startswith(note) for line in lines), f"a note naming the offset: {err!r}")
        rc, out, err = vor("export", bad, "--format", "csv")
        equal(len(out.splitlines()), 30, "csv of a damaged capture: the header row and 29 of 30 frames")

    def test_usage_errors(self):
        path = self.path
        rc, out, err = vor("summary", path, "--bogus")
        equal((rc, err), (2, "vor summary: unknown option '--bogus'; see 'vor summary --help'\n"), "unknown option")
        rc, out, err = vor("export", path)
        equal((rc, err), (2, "vor export: missing --format (chrome, folded, csv or speedscope); see 'vor export --help'\n"),
              "missing --format")
        rc, out, err = vor("export", path, "--format", "xml")
        equal((rc, err), (2, "vor export: unknown format 'xml' (chrome, folded, csv or speedscope); see 'vor export --help'\n"),
              "unknown format")
        rc, out, err = vor("export", "--format", "csv")
        equal((rc, err), (2, "vor export: no capture file given; see 'vor export --help'\n"), "no file")
        rc, out, err = vor("summary", path, path)
        equal(rc, 2, "two files")
        rc, out, err = vor("tail", path, "--interval", "0")
        equal(rc, 2, "--interval 0")
        rc, out, err = vor("frobnicate")
        equal((rc, err), (2, "vor: unknown command 'frobnicate'; see 'vor --help'\n"), "unknown command")
        rc, out, err = vor("--frobnicate")
        equal((rc, err), (2, "vor: unknown option '--frobnicate'; see 'vor --help'\n"), "unknown top-level option")
        rc, out, err = vor()
        check(rc == 2 and out == "" and "usage: vor COMMAND" in err, "no command: usage on stderr, status 2")

    def test_output_errors(self):
        path = self.path
        # Output errors: status 1, the path named; nothing deleted that is not ours.
        unwritable = tmp("no-such-dir/out.csv")
        rc, out, err = vor("export", path, "--format", "csv", "-o", unwritable)
        equal((rc, err), (1, f"vor export: {unwritable}: cannot write: No such file or directory\n"), "-o unwritable")
        if os.path.exists("/dev/full"):
            rc, out, err = vor("export", path, "--format", "csv", "-o", "/dev/full")
            equal((rc, err), (1, "vor export: /dev/full: write error: No space left on device\n"), "-o /dev/full")
            check(os.path.exists("/dev/full"), "/dev/full is still there")
            with open("/dev/full", "w") as full:
                p = subprocess.run([ARGS.vor, "summary", path], stdout=full, stderr=subprocess.PIPE)
            equal((p.returncode, p.stderr.decode()), (1, "vor summary: stdout: write error: No space left on device\n"),
                  "stdout full")

    def test_output_onto_the_capture(self):
        path = self.path
        size = os.path.getsize(path)
        rc, out, err = vor("export", path, "--format", "csv", "-o", path)
        equal((rc, err), (2, f"vor export: {path}: is the capture being exported; choose another output\n"), "-o FILE itself")
        equal(os.path.getsize(path), size, "the capture is untouched")

    def test_help_and_version(self):
        # Help and version.
        rc, top, err = vor("--help")
        equal(rc, 0, "--help")
        for c in ("summary", "export", "tail", "flamegraph", "diff", "serve"):
            check(f"\n  {c} " in top, f"--help lists {c}")
            rc, out, err = vor("help", c)
            check(rc == 0 and "usage" in out.lower(), f"help {c}")
        for c in ("summary", "export", "tail"):
            rc, a, _ = vor("help", c)
            rc2, b, _ = vor(c, "--help")
            rc3, d, _ = vor(c, "-h")
            equal((rc, rc2, rc3), (0, 0, 0), f"help {c}")
            check(a == b == d and a.startswith(f"usage: vor {c}"), f"help {c} texts agree")
        rc, out, err = vor("help", "nope")
        equal((rc, err), (2, "vor help: unknown command 'nope'; see 'vor --help'\n"), "help of an unknown command")
        rc, out, err = vor("--version")
        check(rc == 0 and out.startswith("vor ") and "capture format 1." in out, f"--version: {out!r}")


class Truncated(Group):
    """cli_e2e_truncated."""

    @staticmethod
    def setup():
        path = make_capture("whole.vor", 60)
        whole = Capture(path)
        with open(path, "rb") as fh:
            data = fh.read()
        recs = record_offsets(data)
        pos, n = recs[40]
        cut = tmp("truncated.vor")
        with open(cut, "wb") as fh:
            fh.write(data[:pos + n // 2])  # record 40 torn half-way
        part = Capture(cut)
        return locals()

    def test_torn_tail(self):
        whole, cut, part = self.whole, self.cut, self.part
        equal(part.end["status"], "ok", "a torn tail is not an error for the reader")
        equal(len(part.frames), 40, "complete frames before the tear")
        rc, out, err = vor("summary", cut, "--json")
        equal((rc, err), (0, ""), "summary of a truncated capture")
        s = json.loads(out)
        equal(s["frames"], 40, "frames summarised")
        equal(s["finished"], False, "no end record")
        equal(s["last_index"], whole.frames[39]["index"], "last complete frame")

    def test_torn_tail_folded(self):
        cut, part = self.cut, self.part
        # The run-long scope never ended in the kept part: its time is what the frames kept say
        # (as an open scope where the writer lists them, under the placeholder where not).
        rc, out, err = vor("export", cut, "--format", "folded")
        equal(rc, 0, "folded of a truncated capture")
        got = parse_folded(out)
        equal(got, Rules(part).folded, "the reading rules on the frames kept")
        equal(Rules(part).names.get("run", {}).get("calls", 0), 0, "run never ended in the frames kept")
        for k in got:
            check(plausible(k, WORKLOAD_STACKS), f"a stack the workload never makes: {k!r}")

    def test_torn_tail_csv(self):
        cut = self.cut
        rc, out, err = vor("export", cut, "--format", "csv")
        equal((rc, len(out.splitlines())), (0, 41), "csv of a truncated capture")

    def test_header_only(self):
        data = self.data
        # Only the header: a capture with no frame yet.
        header_only = tmp("header_only.vor")
        with open(header_only, "wb") as fh:
            fh.write(data[:header_bytes(data)])
        rc, out, err = vor("summary", header_only, "--json")
        equal((rc, err), (0, ""), "summary of a header-only capture")
        s = json.loads(out)
        equal((s["frames"], s["span_ns"], s["wall_clock_start"]), (0, None, None), "no frames")
        rc, out, err = vor("summary", header_only)
        check(rc == 0 and "frames    0" in out, f"text summary of no frames: {out!r}")
        rc, out, err = vor("export", header_only, "--format", "csv")
        equal((rc, out.count("\n")), (0, 1), "csv of no frames: the header row")

    def test_torn_header(self):
        data = self.data
        # Cut inside the header: not a complete capture.
        half = tmp("half_header.vor")
        with open(half, "wb") as fh:
            fh.write(data[:10])
        rc, out, err = vor("summary", half)
        equal((rc, err), (2, f"vor summary: {half}: not a capture, or its header is incomplete (10 bytes)\n"),
              "a torn header")


def writer_env(path, flame=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
    env["VOR_RECORD"] = path
    if flame:
        env["VOR_RECORD_FLAME"] = "1"
    return env


class TailRerun(Group):
    """The program run again on the same path while tail follows: the writer truncates the
    file and the new run grows past the offset tail had read before tail looks again. Tail
    must say "new run" once and print the new run from its first frame, not report a corrupt
    record at the old offset (exit 2) or wait forever on a bogus record length."""

    def first_run(self, name, frames):
        path = tmp(name)
        if os.path.exists(path):
            os.remove(path)
        rc, _, err = run([ARGS.workload, str(frames)], env=writer_env(path))
        equal(rc, 0, f"first run ({err})")
        return path

    def test_new_run_between_two_looks(self):
        path = self.first_run("rerun.vor", 5)
        first_size = os.path.getsize(path)
        # A long interval: the whole second run happens between two looks.
        tail = popen_vor([ARGS.vor, "tail", path, "-n", "100", "--interval", "1500"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        try:
            lines = read_lines_until(tail, lambda ls: len(frame_indices(ls)) >= 5, 10)
            equal(frame_indices(lines), list(range(5)), "the first run")
            rc, _, err = run([ARGS.workload, "80"], env=writer_env(path))
            equal(rc, 0, f"second run ({err})")
            check(os.path.getsize(path) > 2 * first_size, "the new run outgrew the old one before tail looked")
            lines += read_lines_until(tail, lambda ls: frame_indices(ls) == list(range(80)), 15)
            check(tail.poll() is None, f"tail still runs (exit {tail.returncode})")
        finally:
            rc, err = stop(tail)
        equal(rc, 0, f"tail exit status ({err!r})")
        equal(frame_indices(lines), list(range(5)) + list(range(80)), "the old run, then the new run from its start")
        equal(err.count("new run"), 1, f"one note: {err!r}")
        check("corrupt" not in err, f"no corruption reported: {err!r}")

    def test_new_runs_while_following_closely(self):
        path = self.first_run("rerun_closely.vor", 80)
        # Following closely (20 ms) while new runs start mid-way through writing.
        tail = popen_vor([ARGS.vor, "tail", path, "--from-start", "--interval", "20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        try:
            lines = read_lines_until(tail, lambda ls: frame_indices(ls) == list(range(80)), 15)
            for frames in (30, 60):
                rc, _, err = run([ARGS.workload, str(frames), "--delay-ms", "2"], env=writer_env(path))
                equal(rc, 0, f"run of {frames} ({err})")
                lines += read_lines_until(tail, lambda ls: (frames - 1) in frame_indices(ls), 15)
            time.sleep(0.2)
            lines += read_lines_until(tail, lambda ls: False, 0.2)
            check(tail.poll() is None, f"tail still runs (exit {tail.returncode})")
        finally:
            rc, err = stop(tail)
        equal(rc, 0, f"tail exit status ({err!r})")
        got = frame_indices(lines)
        equal(got[:80], list(range(80)), "the run that was there")
        # Each new run from its first frame; a frame of an old run seen before the truncation
        # may come first, but nothing out of order within a run.
        equal(got[-90:], list(range(30)) + list(range(60)), f"both new runs in full: {got[80:]}")
        equal(err.count("new run"), 2, f"one note per new run: {err!r}")


def run_closed_stdout(args):
    """Runs vor with stdout a pipe whose reading end is already closed: every write fails."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([ARGS.vor, *args], stdout=w, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(w)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def temporaries(directory):
    return sorted(n for n in os.listdir(directory) if ".vor-" in n)


class Outputs(Group):
    """cli_e2e_outputs."""

    @staticmethod
    def setup():
        path = make_capture("out.vor", 40)
        with open(path, "rb") as fh:
            original = fh.read()
        other = make_capture("other.vor", 30)

        def untouched(what):
            with open(path, "rb") as fh:
                equal(fh.read() == original, True, f"{what}: the capture is untouched")
        return locals()

    def test_output_that_is_the_input(self):
        path, untouched = self.path, self.untouched
        # 1. An output that is an input is refused before anything is written (exit 2).
        rc, out, err = vor("flamegraph", path, "-o", path)
        equal((rc, err), (2, f"vor flamegraph: {path}: is the capture being drawn; choose another output\n"),
              "flamegraph -o its own capture")
        untouched("flamegraph -o")

    def test_output_through_a_symlink_to_the_input(self):
        path, other, untouched = self.path, self.other, self.untouched
        link = tmp("out-link.vor")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.basename(path), link)
        rc, out, err = vor("flamegraph", link, "-o", path)
        equal(rc, 2, f"flamegraph through a symlink ({err!r})")
        rc, out, err = vor("export", path, "--format", "csv", "-o", link)
        equal((rc, err), (2, f"vor export: {link}: is the capture being exported; choose another output\n"),
              "export -o a symlink to the capture")
        untouched("export -o symlink")
        rc, out, err = vor("diff", other, path, "--svg", path)
        equal((rc, err), (2, f"vor diff: {path}: is capture B; choose another output\n"), "diff --svg B")
        rc, out, err = vor("diff", path, other, "--svg", link)
        equal((rc, err), (2, f"vor diff: {link}: is capture A; choose another output\n"), "diff --svg A (a symlink)")
        untouched("diff --svg")

    def test_folded_stacks_onto_themselves(self):
        stacks = tmp("stacks.txt")
        with open(stacks, "w") as fh:
            fh.write("main;parse 30\nmain;eval 20\n")
        rc, out, err = vor("flamegraph", "--folded", stacks, "-o", stacks)
        equal((rc, err), (2, f"vor flamegraph: {stacks}: is the folded stacks file being drawn; choose another output\n"),
              "flamegraph --folded F -o F")
        with open(stacks) as fh:
            equal(fh.read(), "main;parse 30\nmain;eval 20\n", "the stacks are untouched")

    def test_stdout_appended_to_the_input(self):
        path, untouched = self.path, self.untouched
        with open(path, "ab") as fh:  # `vor export X >> X`
            p = subprocess.run([ARGS.vor, "export", path, "--format", "csv"], stdout=fh, stderr=subprocess.PIPE)
        equal((p.returncode, p.stderr.decode()),
              (2, "vor export: stdout: is the capture being exported; choose another output\n"), "export >> the capture")
        untouched("export >>")
        for cmd in (["summary", path], ["tail", path, "--from-start"]):
            with open(path, "ab") as fh:
                p = subprocess.run([ARGS.vor, *cmd], stdout=fh, stderr=subprocess.PIPE, timeout=20)
            check(p.returncode == 2 and b"stdout: is the capture being" in p.stderr, f"{cmd[0]} >> the capture: {p.stderr!r}")
            untouched(f"{cmd[0]} >>")

    def test_o_dev_stdout(self):
        path = self.path
        # -o /dev/stdout names an open descriptor: written directly, a pipe or a file.
        rc, csv_text, err = vor("export", path, "--format", "csv")
        rc, out, err = vor("export", path, "--format", "csv", "-o", "/dev/stdout")
        equal((rc, out, err), (0, csv_text, ""), "-o /dev/stdout into a pipe")
        via = tmp("via-stdout.csv")
        with open(via, "w") as fh:
            p = subprocess.run([ARGS.vor, "export", path, "--format", "csv", "-o", "/dev/stdout"], stdout=fh,
                               stderr=subprocess.PIPE)
        equal(p.returncode, 0, f"-o /dev/stdout into a file ({p.stderr!r})")
        with open(via) as fh:
            equal(fh.read(), csv_text, "-o /dev/stdout into a file")

    def test_empty_output_name(self):
        path, other = self.path, self.other
        for cmd in (["export", path, "--format", "csv", "-o", ""], ["flamegraph", path, "-o", ""],
                    ["diff", path, other, "--svg", ""]):
            rc, out, err = vor(*cmd)
            check(rc == 2 and "needs a file name" in err and err.count("\n") == 1, f"{cmd}: empty output name: {err!r}")

    def outdir(self, name):
        """An output folder of this test's own (the tests look for temporaries left in it)."""
        outdir = tmp(name)
        os.makedirs(outdir, exist_ok=True)
        return outdir

    def test_out_replaced_only_when_complete(self):
        path = self.path
        # 2. OUT is replaced only by a complete output.
        outdir = self.outdir("outdir")
        target = os.path.join(outdir, "keep.csv")
        with open(target, "w") as fh:
            fh.write("precious\n")
        bad = broken_copy(path, "out-corrupt.vor")
        rc, out, err = vor("export", bad, "--format", "csv", "-o", target)
        equal(rc, 2, f"export of a corrupt capture ({err!r})")
        with open(target) as fh:
            equal(fh.read(), "precious\n", "an existing OUT survives a failed export")
        equal(temporaries(outdir), [], "no temporary left")
        rc, out, err = vor("export", path, "--format", "csv", "-o", target)
        equal((rc, err), (0, ""), "export over an existing OUT")
        rc, want, _ = vor("export", path, "--format", "csv")
        with open(target) as fh:
            equal(fh.read(), want, "OUT replaced by the whole export")
        equal(temporaries(outdir), [], "no temporary left after success")

    def test_new_file_mode_and_symlink_out(self):
        path, other = self.path, self.other
        # The permissions of a new file (0666 minus the umask), and a symlink OUT stays a link.
        outdir = self.outdir("outdir_mode")
        target = os.path.join(outdir, "keep.csv")
        with open(target, "w") as fh:
            fh.write("precious\n")
        fresh = os.path.join(outdir, "fresh.csv")
        if os.path.exists(fresh):
            os.remove(fresh)
        p = subprocess.run([ARGS.vor, "export", path, "--format", "csv", "-o", fresh], stderr=subprocess.PIPE,
                           preexec_fn=lambda: os.umask(0o027))
        equal(p.returncode, 0, f"export with umask 027 ({p.stderr!r})")
        equal(oct(os.stat(fresh).st_mode & 0o777), oct(0o640), "mode of a new OUT")
        out_link = os.path.join(outdir, "link.csv")
        if os.path.lexists(out_link):
            os.remove(out_link)
        os.symlink("keep.csv", out_link)
        rc, out, err = vor("export", other, "--format", "csv", "-o", out_link)
        equal(rc, 0, f"export -o a symlink ({err!r})")
        check(os.path.islink(out_link), "the symlink stays a symlink")
        rc, want, _ = vor("export", other, "--format", "csv")
        with open(target) as fh:
            equal(fh.read(), want, "the symlink's target got the export")

    def test_interrupted_export(self):
        outdir = self.outdir("outdir_interrupted")
        for name, sig, status in (("SIGINT", signal.SIGINT, 130), ("SIGTERM", signal.SIGTERM, 143),
                                  ("SIGHUP", signal.SIGHUP, 129)):
            interrupt_export(outdir, name, sig, status)

    def test_closed_pipe(self):
        path, other = self.path, self.other
        # 7. Exit statuses. A closed pipe: exit 1 quietly (not death by SIGPIPE, 141).
        for cmd in (["export", path, "--format", "csv"], ["export", path, "--format", "chrome"],
                    ["export", path, "--format", "folded"], ["summary", path], ["summary", path, "--json"],
                    ["diff", path, other], ["flamegraph", path], ["--help"], ["help", "export"], ["--version"]):
            rc, err = run_closed_stdout(cmd)
            equal((rc, err), (1, ""), f"vor {' '.join(cmd)} | (closed pipe)")

    def test_full_device(self):
        path, other = self.path, self.other
        if os.path.exists("/dev/full"):
            for cmd, who in ((["--help"], "vor"), (["help", "export"], "vor help"), (["--version"], "vor"),
                             (["export", "--help"], "vor export")):
                with open("/dev/full", "w") as full:
                    p = subprocess.run([ARGS.vor, *cmd], stdout=full, stderr=subprocess.PIPE)
                equal((p.returncode, p.stderr.decode()), (1, f"{who}: stdout: write error: No space left on device\n"),
                      f"vor {' '.join(cmd)} > /dev/full")
            rc, out, err = vor("flamegraph", path, "-o", "/dev/full")
            equal((rc, err), (1, "vor flamegraph: /dev/full: cannot write the SVG: No space left on device\n"),
                  "flamegraph -o /dev/full")
            rc, out, err = vor("diff", path, other, "--svg", "/dev/full")
            equal((rc, err), (1, "vor diff: /dev/full: cannot write the SVG: No space left on device\n"),
                  "diff --svg /dev/full")
            check(os.path.exists("/dev/full"), "/dev/full is still there")

    def test_folded_without_stacks(self):
        outdir = self.outdir("outdir_folded")
        svg = os.path.join(outdir, "f.svg")
        empty = tmp("empty.folded")
        open(empty, "w").close()
        rc, out, err = vor("flamegraph", "--folded", empty, "-o", svg)
        equal((rc, err), (2, f"vor flamegraph: {empty}: no stacks: no 'frame;frame;... COUNT' line with a count above 0\n"),
              "--folded of an empty file")
        check(not os.path.exists(svg), "no SVG written for no stacks")
        rc, out, err = vor("flamegraph", "--folded", outdir, "-o", svg)
        equal((rc, err), (2, f"vor flamegraph: {outdir}: is a directory, not a folded stacks file\n"), "--folded DIR")


BIG_CAPTURE = None


def interrupt_export(outdir, name, sig, status):
    """SIGINT / SIGTERM / SIGHUP while `export -o OUT` writes: the temporary goes, OUT stays as it
    was, exit 128 + the signal. The export is fast, so the signal is sent as soon as the
    temporary appears; when the export wins the race, it is tried again."""
    global BIG_CAPTURE
    if BIG_CAPTURE is None:  # made once per run, never taken from an earlier run's files
        BIG_CAPTURE = make_capture("big.vor", 20000)
    big = BIG_CAPTURE
    target = os.path.join(outdir, "interrupted.json")
    for attempt in range(8):
        with open(target, "w") as fh:
            fh.write("before\n")
        proc = popen_vor([ARGS.vor, "export", big, "--format", "chrome", "-o", target],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None and not temporaries(outdir):
            pass
        if proc.poll() is None:
            proc.send_signal(sig)
        rc = proc.wait(timeout=30)
        proc.stderr.read()
        proc.stderr.close()
        if rc == 0 or rc == -sig:
            continue  # finished before the signal (or just after OUT was complete): try again
        equal(rc, status, f"{name}: exit status")
        with open(target) as fh:
            equal(fh.read(), "before\n", f"{name}: OUT is as it was")
        equal(temporaries(outdir), [], f"{name}: the temporary is removed")
        return
    raise Failure(f"{name}: the export always finished before the signal")


class Inputs(Group):
    """cli_e2e_inputs."""

    @staticmethod
    def setup():
        path = make_capture("in.vor", 20)
        fifo = tmp("in.fifo")
        if os.path.lexists(fifo):
            os.remove(fifo)
        os.mkfifo(fifo)
        return locals()

    def test_fifo(self):
        path, fifo = self.path, self.fifo
        pipe_msg = f"vor summary: {fifo}: is a pipe; vor reads capture files (save the stream to a file first)\n"
        for cmd in (["summary", fifo], ["export", fifo, "--format", "csv"], ["flamegraph", fifo, "-o", tmp("x.svg")],
                    ["diff", path, fifo], ["tail", fifo]):
            try:
                rc, out, err = vor(*cmd, timeout=10)
            except subprocess.TimeoutExpired:
                raise Failure(f"vor {' '.join(cmd)}: hangs on a FIFO without a writer")
            equal((rc, err), (2, pipe_msg.replace("summary", cmd[0])), f"vor {cmd[0]} of a FIFO")

    def test_folded_fifo(self):
        fifo = self.fifo
        try:
            rc, out, err = vor("flamegraph", "--folded", fifo, "-o", tmp("x.svg"), timeout=10)
        except subprocess.TimeoutExpired:
            raise Failure("flamegraph --folded FIFO hangs")
        equal((rc, err), (2, f"vor flamegraph: {fifo}: is a pipe; to read folded stacks from a pipe, give --folded - (stdin)\n"),
              "--folded FIFO")

    def test_pipe_as_dev_stdin(self):
        path = self.path
        with open(path, "rb") as fh:
            data = fh.read()
        p = subprocess.run([ARGS.vor, "summary", "/dev/stdin"], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        equal((p.returncode, p.stderr.decode()),
              (2, "vor summary: /dev/stdin: is a pipe; vor reads capture files (save the stream to a file first)\n"),
              "a pipe as /dev/stdin")

    def test_file_as_dev_stdin(self):
        path = self.path
        with open(path, "rb") as fh:  # a regular file as /dev/stdin is a file
            p = subprocess.run([ARGS.vor, "summary", "/dev/stdin", "--json"], stdin=fh, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        equal(p.returncode, 0, f"a file redirected to /dev/stdin ({p.stderr!r})")
        equal(json.loads(p.stdout)["frames"], 20, "frames read through /dev/stdin")

    def test_device(self):
        rc, out, err = vor("summary", "/dev/null")
        equal((rc, err), (2, "vor summary: /dev/null: is not a regular file; vor reads capture files\n"), "a device")

    def test_folded_from_a_pipe(self):
        # Folded stacks from a pipe: --folded - still works.
        svg = tmp("stdin.svg")
        p = subprocess.run([ARGS.vor, "flamegraph", "--folded", "-", "-o", svg], input=b"main;a 5\nmain;b 7\n",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        equal((p.returncode, p.stderr), (0, b""), "--folded - from a pipe")
        check(os.path.getsize(svg) > 0, "an SVG from stdin")

    def test_tail_of_a_fifo_that_appears(self):
        # tail waits for the file; what appears must be a regular file.
        late = tmp("late.fifo")
        if os.path.lexists(late):
            os.remove(late)
        tail = popen_vor([ARGS.vor, "tail", late, "--interval", "20"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
        time.sleep(0.3)
        os.mkfifo(late)
        try:
            rc = tail.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tail.kill()
            raise Failure("tail hangs on a FIFO that appeared")
        err = tail.stderr.read().decode()
        equal(rc, 2, f"tail of a FIFO that appeared ({err!r})")
        check(err.endswith(f"vor tail: {late}: is a pipe; vor reads capture files (save the stream to a file first)\n"),
              f"tail's message: {err!r}")


def check_safe_text(data, what, allow=b"\n"):
    """Text for a terminal: valid UTF-8, no control characters but `allow`."""
    try:
        data.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        raise Failure(f"{what}: invalid UTF-8: {e}: {data[:300]!r}")
    bad = sorted({b for b in data if (b < 0x20 and b not in allow) or b == 0x7F})
    check(not bad, f"{what}: control bytes {bad}: {data[:300]!r}")
    check(b"\xc2\x9b" not in data, f"{what}: a C1 control (CSI)")


def load_json_strict(data, what):
    try:
        return json.loads(data.decode("utf-8", "strict"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Failure(f"{what}: not valid UTF-8 JSON: {e}")


ODD_METRIC = "odd\x1b[2J\nmetric\ufffd"  # as decoded from vor's JSON
ODD_METRIC_SHOWN = "odd\\x1b[2J\\nmetric\\xff"  # as shown in text
ODD_SCOPE = "scope\x1b]0;pwned\x07" + "\ufffd" * 9  # c0 af | ed a0 80 | f4 90 80 80: one per maximal subpart
ODD_SCOPE_SHOWN = "scope\\x1b]0;pwned\\x07\\xc0\\xaf\\xed\\xa0"  # cut to the 40-byte name column with "..."


class Text(Group):
    """cli_e2e_text."""

    @staticmethod
    def setup():
        path = make_capture("odd.vor", 30, odd_names=True)
        return locals()

    def test_json_is_valid_utf8(self):
        path = self.path
        # 4. JSON is valid UTF-8 whatever the names hold.
        rc, out, err = vor("summary", path, "--json", raw=True)
        equal((rc, err), (0, b""), "summary --json of odd names")
        s = load_json_strict(out, "summary --json")
        check(b"\x1b" not in out, "ESC escaped in JSON")
        names = [m["name"] for m in s["metrics"]]
        check(ODD_METRIC in names, f"the odd metric, U+FFFD for the invalid byte: {names}")
        scopes = [r["name"] for r in s["top_by_total"]]
        check(ODD_SCOPE in scopes, f"the odd scope: {scopes}")
        rc, out, err = vor("diff", path, path, "--json", raw=True)
        equal(rc, 0, f"diff --json ({err!r})")
        d = load_json_strict(out, "diff --json")
        check(ODD_SCOPE in [r["name"] for r in d["scopes"]], "the odd scope in diff --json")

    def test_text_is_escaped(self):
        path = self.path
        # Text: control characters escaped, invalid bytes shown as \xNN.
        rc, out, err = vor("summary", path, raw=True)
        equal(rc, 0, "summary text")
        check_safe_text(out, "summary text")
        text = out.decode()
        check(ODD_METRIC_SHOWN in text, f"the odd metric shown escaped:\n{text}")
        check(ODD_SCOPE_SHOWN + "..." in text, f"the odd scope shown escaped:\n{text}")
        rc, out, err = vor("diff", path, path, raw=True)
        equal(rc, 0, "diff text")
        check_safe_text(out, "diff text")
        tail = popen_vor([ARGS.vor, "tail", path, "-n", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = read_lines_until(tail, lambda ls: len(ls) >= 3, 10)
        rc, err = stop(tail)
        equal(len(lines), 3, "tail lines")
        for line in lines:
            check_safe_text(line.encode(), "tail line")
            check(f" {ODD_METRIC_SHOWN}=" in line, f"the odd metric on the tail line: {line!r}")

    def test_odd_file_names(self):
        path = self.path
        # File names with control characters and invalid UTF-8.
        odd_dir = tmp("odd-names").encode()
        os.makedirs(odd_dir, exist_ok=True)
        odd_file = os.path.join(odd_dir, b"cap\xff\x1b[31m.vor")
        with open(path, "rb") as src, open(odd_file, "wb") as dst:
            dst.write(src.read())
        rc, out, err = run([ARGS.vor.encode(), b"summary", odd_file, b"--json"], raw=True)
        equal(rc, 0, f"summary of an odd file name ({err!r})")
        s = load_json_strict(out, "summary --json of an odd file name")
        equal(s["file"], odd_dir.decode() + "/cap\ufffd\x1b[31m.vor", "file, with U+FFFD")
        rc, out, err = run([ARGS.vor.encode(), b"summary", odd_file], raw=True)
        check_safe_text(out, "summary text of an odd file name")
        check(f"capture   {odd_dir.decode()}/cap\\xff\\x1b[31m.vor\n".encode() in out, f"the path shown: {out[:200]!r}")
        gone = os.path.join(odd_dir, b"gone\x1b[2J\n.vor")
        rc, out, err = run([ARGS.vor.encode(), b"summary", gone], raw=True)
        equal((rc, err), (2, b"vor summary: " + odd_dir + b"/gone\\x1b[2J\\n.vor: No such file or directory\n"),
              "one escaped line for a missing odd file")

    def test_binary_folded_file(self):
        binary = tmp("random.bin")
        with open(binary, "wb") as fh:
            fh.write(b"\x1b[2J\xff\xfe\x1b]0;x\x07 garbage line\n" + bytes(range(1, 256)) + b"\n")
        rc, out, err = vor("flamegraph", "--folded", binary, "-o", tmp("r.svg"), raw=True)
        equal(rc, 2, f"--folded of a binary file ({err!r})")
        check_safe_text(err, "the message about a binary file")
        check(err.count(b"\n") == 1 and err.startswith(f"vor flamegraph: {binary}:1: ".encode()), f"one line: {err!r}")

    def test_long_paths(self):
        path = self.path
        # 5. Long paths are shortened in the middle; the problem is always there.
        long_missing = tmp("x" * 200) + "/" + "y" * 200 + ("/" + "z" * 200) * 15 + "/missing.vor"
        rc, out, err = vor("summary", long_missing)
        equal(rc, 2, "a long missing path")
        check(err.endswith(": No such file or directory\n") and err.count("\n") == 1, f"the problem is kept: {err[-120:]!r}")
        check(len(err.encode()) <= 1025 and "..." in err and err.startswith("vor summary: " + tmp("xxx")),
              f"shortened in the middle ({len(err)} bytes)")
        check(err.endswith("zzz/missing.vor: No such file or directory\n"), "the end of the path is kept")
        deep = tmp("deep")
        for i in range(14):
            deep = os.path.join(deep, f"{i:02d}" + "d" * 200)
        os.makedirs(deep, exist_ok=True)
        bad = os.path.join(deep, "corrupt.vor")
        with open(broken_copy(path, "odd-corrupt.vor"), "rb") as src, open(bad, "wb") as dst:
            dst.write(src.read())
        check(len(bad) > 2048, "a path longer than the old 2 KiB message line")
        rc, out, err = vor("summary", bad)
        equal(rc, 2, "a corrupt capture at a long path")
        check(re.search(r"\(at byte \d+\)\n$", err) and err.count("\n") == 1, f"the reader's problem is kept: {err[-200:]!r}")
        check("/corrupt.vor: " in err, f"the file's name is kept: {err[-200:]!r}")
        rc, out, err = vor("export", path, "--format", "csv", "-o", long_missing)
        equal(rc, 1, "-o a long missing path")
        check(err.endswith("missing.vor: cannot write: No such file or directory\n"), f"-o: {err[-100:]!r}")
        long_folded = os.path.join(deep, "bad.folded")
        with open(long_folded, "w") as fh:
            fh.write("main;x notanumber\n")
        rc, out, err = vor("flamegraph", "--folded", long_folded, "-o", tmp("r.svg"))
        equal(rc, 2, "bad folded stacks at a long path")
        check(err.endswith("bad.folded:1: missing count at the end of the line (expected 'frame;frame;... COUNT'): "
                           "'main;x notanumber'\n"), f"the folded reader's problem is kept: {err[-200:]!r}")


# With --span-mark and --burst (capture_workload.c).
SPAN_STACKS = WORKLOAD_STACKS | {"main;run;step", "main;run;step;child before the mark",
                                 "main;run;step;child after the mark", "worker;load;tick"}


def svg_frame_names(path):
    import xml.etree.ElementTree as ET
    names = set()
    for t in ET.parse(path).getroot().iter("{http://www.w3.org/2000/svg}title"):
        m = re.match(r"(.*) \([^()]*\)$", t.text or "")
        if m:
            names.add(m.group(1))
    return names


class TrueStacks(Group):
    """Issue 9.2 on real captures: VOR_RECORD_EVERY=3, VOR_RECORD_MAX_FRAMES, pauses, drops,
    a scope open across every frame mark, two threads. Every output shows only stacks the
    program makes, no negative self time, and the numbers of the reading rules."""

    def check_stacks(self, name, env, options, frames):
        path = make_capture(f"stacks_{name}.vor", frames, extra_env=env, options=options)
        cap = Capture(path)
        rules = Rules(cap)
        # folded
        rc, out, err = vor("export", path, "--format", "folded")
        equal(rc, 0, f"{name}: export folded ({err!r})")
        got = parse_folded(out)
        for k in got:
            check(plausible(k, SPAN_STACKS), f"{name}: a stack the program never makes: {k!r}")
        equal(got, rules.folded, f"{name}: folded = the reading rules")
        # summary
        rc, out, err = vor("summary", path, "--json", "--top", "0")
        equal(rc, 0, f"{name}: summary")
        rc, out, err = vor("summary", path, "--json", "--top", "1000")
        s = json.loads(out)
        rows = {r["name"]: r for r in s["top_by_total"]}
        equal(sorted(rows), sorted(rules.names), f"{name}: summary names")
        for n, r in rows.items():
            e = rules.names[n]
            equal([r["calls"], r["total_ns"], r["self_ns"]], [e["calls"], e["total"], e["self"]], f"{name}: {n}")
            check(r["self_ns"] >= 0 and r["total_ns"] >= 0, f"{name}: {n}: negative time")
        equal(s["scope_notes"]["parent_not_recorded"], rules.parent_unknown, f"{name}: parent not recorded")
        equal(s["drops"]["total"], sum(max(f["dropped"], sum(c for _, _, c in f["drops"])) for f in cap.frames),
              f"{name}: drops")
        if "--burst" in options:
            check(s["drops"]["total"] > 0, f"{name}: the burst drops scopes")
        # flamegraph: the frames drawn are the names and threads, nothing else
        svg = tmp(f"stacks_{name}.svg")
        rc, out, err = vor("flamegraph", path, "-o", svg)
        equal(rc, 0, f"{name}: flamegraph ({err!r})")
        drawn = svg_frame_names(svg)
        check(drawn <= set(rules.names) | {"all", "main", "worker", PLACEHOLDER}, f"{name}: drawn {drawn}")
        with open(svg, encoding="utf-8") as fh:
            text = fh.read()
        check("scopes dropped" in text, f"{name}: the SVG says what was dropped")
        # diff against itself: the same totals
        rc, out, err = vor("diff", path, path, "--json", "--top", "0")
        equal(rc, 0, f"{name}: diff")
        d = json.loads(out)
        for r in d["scopes"]:
            equal(r["a"]["total_ns"], rules.names[r["name"]]["total"], f"{name}: diff total of {r['name']}")
        equal(d["a"]["drops"]["total"], s["drops"]["in_flame_frames"], f"{name}: diff drops (in the flame frames)")

    def test_every_third_frame_with_pauses_and_drops(self):
        self.check_stacks("every3", {"VOR_RECORD_EVERY": "3"}, ["--span-mark", "--pause", "--burst"], 60)

    def test_max_frames_with_drops(self):
        self.check_stacks("max_frames", {"VOR_RECORD_MAX_FRAMES": "10"}, ["--span-mark", "--burst"], 40)

    def test_every_frame_with_pauses(self):
        self.check_stacks("every1", {}, ["--span-mark", "--pause"], 40)


def help_options(text):
    """(option, takes a value) for each option a --help text defines: lines that start with
    blanks and a dash, and the usage lines' [--option VALUE] groups."""
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s+(-\w)?(?:, )?(--[a-z][\w-]*)?( [A-Z][\w.\[\]%]*)?", line)
        if m and (m.group(1) or m.group(2)):
            for opt in (m.group(1), m.group(2)):
                if opt:
                    found[opt] = bool(m.group(3))
        if line.startswith("usage:") or line.startswith("       vor"):
            for opt, value in re.findall(r"\[(--[a-z][\w-]*)( [A-Z][\w.]*)?", line):
                found.setdefault(opt, bool(value))
    return found


class Help(Group):
    """Issue 10.6: every option a command's --help offers is one the command takes (a
    one-input command offers no option for two inputs), and the help says what it is."""

    def test_help(self):
        for cmd in ("summary", "export", "tail", "flamegraph", "diff", "serve", "symbolize"):
            rc, text, err = vor(cmd, "--help")
            equal((rc, err), (0, ""), f"vor {cmd} --help")
            opts = help_options(text)
            check(len(opts) >= 3, f"{cmd}: options found in the help: {opts}")
            for opt, takes_value in sorted(opts.items()):
                if opt in ("-h", "--help"):
                    continue
                args = [cmd, opt] + (["1"] if takes_value else []) + ["--zz-not-an-option"]
                rc, out, err = vor(*args, timeout=30)
                equal(rc, 2, f"vor {' '.join(args)}")
                check(f"unknown option '{opt}" not in err and "takes no value" not in err and "needs a value" not in err,
                      f"vor {' '.join(args)}: the help offers {opt}, the command refuses it: {err!r}")
        rc, text, err = vor("flamegraph", "--help")
        for word in ("--normalize", "Differential"):
            check(word not in text, f"vor flamegraph --help offers {word!r}: it takes one input")


TESTS = {
    "true_stacks": TrueStacks,
    "help": Help,
    "summary": Summary,
    "csv": Csv,
    "folded": Folded,
    "chrome": Chrome,
    "tail": Tail,
    "tail_rerun": TailRerun,
    "errors": Errors,
    "truncated": Truncated,
    "outputs": Outputs,
    "inputs": Inputs,
    "text": Text,
}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--vor", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("-k", dest="only", help="run only the tests whose name contains this")
    ARGS = ap.parse_args()
    ARGS.tmp = os.path.join(ARGS.tmp, ARGS.test)
    tests = unittest.defaultTestLoader.loadTestsFromTestCase(TESTS[ARGS.test])
    if ARGS.only:
        tests = unittest.TestSuite(t for t in tests if ARGS.only in t.id())
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(tests)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
