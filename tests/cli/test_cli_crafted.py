#!/usr/bin/env python3
"""test_cli_crafted.py: the `vor` command on captures no instrumented program makes, written
byte by byte by craft_capture.py: durations near 2^63, flame frames without scopes, thread
ids >= 65,536, undeclared site ids near 2^32, sparse and long-named columns, renamed
threads, control characters in names.

    test_cli_crafted.py TEST --vor PATH --dump PATH --tmp DIR

TEST is one of: overflow empty ids columns rename escapes. The same test runs against the
normal build and against build/asan's `vor` (ASan + UBSan, -fno-sanitize-recover): there an
integer overflow or a NULL passed to qsort aborts the command, so "exit 0 and no sanitizer
report" is part of every check. Exit status: 0 passed, 1 failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, equal  # noqa: E402
from craft_capture import CaptureWriter  # noqa: E402
from reading_rules import Dump, Rules, INT64_MAX  # noqa: E402

ARGS = None


def tmp(name):
    os.makedirs(ARGS.tmp, exist_ok=True)
    return os.path.join(ARGS.tmp, name)


def vor(*args, expect=0):
    p = subprocess.run([ARGS.vor, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out = p.stdout.decode("utf-8", "surrogateescape")
    err = p.stderr.decode("utf-8", "surrogateescape")
    for marker in ("runtime error", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer"):
        check(marker not in err, f"vor {' '.join(args)}: sanitizer report:\n{err}")
    equal(p.returncode, expect, f"vor {' '.join(args)} exit status (stderr {err!r})")
    return out, err, p.stdout


def folded(text):
    out = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        check(stack and re.fullmatch(r"[0-9]+(\.[0-9]+)?", value), f"bad folded line {line!r}")
        check(stack not in out, f"duplicate stack {stack!r}")
        out[stack] = float(value)
    return out


def svg_titles(path):
    """The texts of the frames' <title> elements."""
    with open(path, encoding="utf-8") as fh:
        return re.findall(r"<title>([^<]*)</title>", fh.read())


def every_command(path, svg_name):
    """summary (text, json), folded, flamegraph and diff against itself: all must succeed."""
    vor("summary", path)
    s = json.loads(vor("summary", path, "--json")[0])
    f = folded(vor("export", path, "--format", "folded")[0])
    vor("export", path, "--format", "csv")
    vor("flamegraph", path, "-o", tmp(svg_name))
    d = json.loads(vor("diff", path, path, "--json", "--svg", tmp("diff-" + svg_name))[0])
    return s, f, d


# ---- Tests ---------------------------------------------------------------------------------

G = 1 << 61


def test_overflow():
    """Durations near 2^63: every sum saturates at INT64_MAX, none wraps negative."""
    w = CaptureWriter()
    sites = [(1, "top", "", "", 0), (2, "kid", "", "", 0), (3, "rec", "", "", 0)]
    for k in range(3):
        s0 = k * G
        # Five children, each nearly as long as their parent (inconsistent on purpose: the
        # reader accepts it), and a scope nested four deep in itself.
        scopes = [(2, 1, s0, G - 10)] * 5 + [(1, 0, s0, G)]
        scopes += [(3, 3, s0, G), (3, 2, s0, G), (3, 1, s0, G), (3, 0, s0, G)]
        w.frame(duration=G - 1 if k == 2 else G, start=s0, overhead=1 << 62, sites=sites if k == 0 else (),
                threads=[(0, "main", 0)] if k == 0 else (), flame={0: scopes})
    w.end()
    path = w.save(tmp("overflow.vor"))
    s, f, d = every_command(path, "overflow.svg")
    rows = {r["name"]: r for r in s["top_by_total"]}
    want = Rules(Dump(ARGS.dump, path)).names
    for name in ("top", "kid", "rec"):
        r = rows[name]
        check(r["total_ns"] >= 0 and r["self_ns"] >= 0 and r["max_ns"] >= 0, f"{name}: negative figure {r}")
        equal([r["calls"], r["total_ns"], r["self_ns"], r["max_ns"]],
              [want[name]["calls"], want[name]["total"], want[name]["self"], want[name]["max"]], f"{name} figures")
    equal(rows["kid"]["total_ns"], INT64_MAX, "15 x 2^61 saturates")
    equal(rows["top"]["self_ns"], 0, "children longer than their parent: self 0")
    equal(s["scope_notes"]["children_longer"], 3, "counted, once per frame")
    equal(s["overhead_ns"], INT64_MAX, "overhead sum saturates")
    check(s["span_ns"] > 0, "span")
    check(all(v >= 0 for v in f.values()), f"negative folded values {f}")
    check(f["main;top;kid"] > 1e19 and f["main;rec;rec;rec;rec"] > 1e18, f"folded values {f}")
    for side in ("a", "b"):
        rows = {r["name"]: r[side] for r in d["scopes"]}
        check(all(r["total_ns"] >= 0 and r["mean_ns"] >= 0 and r["p95_ns"] >= 0 for r in rows.values()),
              f"diff {side}: negative figure {rows}")


def test_empty():
    """Flame frames with no thread, threads with no scope, among frames with scopes."""
    w = CaptureWriter()
    w.frame(duration=1000, flame={})
    w.frame(duration=1000, threads=[(1, "main", 0)], sites=[(1, "work", "", "", 0)], flame={1: [(1, 0, 1100, 300)]})
    w.frame(duration=1000, flame={1: []})
    w.frame(duration=1000, flame=[(2, []), (1, [(1, 0, 3100, 5)]), (3, [])])
    w.frame(duration=1000, flame=[])
    w.end()
    path = w.save(tmp("empty.vor"))
    s, f, d = every_command(path, "empty.svg")
    equal(s["flame_frames"], 5, "flame frames")
    equal([(r["name"], r["calls"], r["total_ns"]) for r in s["top_by_total"]], [("work", 2, 305)], "the one scope")
    equal(f, {"main;work": 305.0}, "folded")
    # Only flame frames without scopes: every command says so and none crashes. (No thread
    # is listed: a thread with no scope before any scope was read trips the reader itself
    # under UBSan, core/src/record_decoder.c, which is not this test's subject.)
    w = CaptureWriter()
    w.frame(duration=1000, flame={})
    w.frame(duration=1000, threads=[(1, "main", 0)], flame={})
    w.end()
    path = w.save(tmp("all_empty.vor"))
    s = json.loads(vor("summary", path, "--json")[0])
    equal((s["flame_frames"], s["top_by_total"]), (2, []), "summary of empty flame frames")
    equal(vor("export", path, "--format", "folded")[0], "", "folded of empty flame frames")
    _, err, _ = vor("flamegraph", path, "-o", tmp("all_empty.svg"), expect=2)
    check("no scope time" in err, f"flamegraph message: {err!r}")
    vor("diff", path, path)


def test_ids():
    """Thread ids up to 2^32 - 1 and undeclared site ids near 2^32: named, never dropped,
    never 'out of memory', no table sized by the id."""
    w = CaptureWriter()
    big = [5, 65536, 70000, 0xFFFFFFFE, 0xFFFFFFFF]
    threads = [(t, f"t{t}", 0) for t in big]
    sites = [(7, "seven", "", "", 0)]
    flame = {}
    for n, t in enumerate(big):
        flame[t] = [(7, 1, 10, 100 + n), (0xFFFFFFFF - n, 0, 5, 500)]
    w.frame(duration=1000, threads=threads, sites=sites, flame=flame)
    w.frame(duration=1000, flame={0xFFFFFFFF: [(0x80000000, 0, 1500, 7)], 123456789: [(1 << 31 | 5, 0, 1100, 9)]})
    w.end()
    path = w.save(tmp("ids.vor"))
    s, f, d = every_command(path, "ids.svg")
    rows = {r["name"]: r for r in s["top_by_total"]}
    equal(rows["seven"]["calls"], 5, "scopes of every thread counted")
    for n in range(5):
        equal(rows[f"site {0xFFFFFFFF - n}"]["calls"], 1, f"site {0xFFFFFFFF - n} named")
    equal(rows["site 2147483648"]["total_ns"], 7, "an undeclared site id 2^31")
    for n, t in enumerate(big):
        equal(f[f"t{t};site {0xFFFFFFFF - n};seven"], 100.0 + n, f"thread {t} in the folded stacks")
    equal(f["thread 123456789;site 2147483653"], 9.0, "an undeclared thread id")
    titles = " ".join(svg_titles(tmp("ids.svg")))
    check("t4294967295 (" in titles and "t65536 (" in titles, f"threads past 65,535 drawn: {titles}")


def test_columns():
    """Sparse user column ids: the CSV has the declared columns only; long names whole."""
    long_name = "m" * 1000 + "\u00e9"
    w = CaptureWriter()
    w.frame(duration=1000, columns=[(5, "five", "u"), (4095, long_name, "")], values={5: 1.5, 4095: 2.0})
    w.frame(duration=1000, values={5: 2.5})
    w.frame(duration=1000, columns=[(9, "nine", "")], values={5: 3.5, 9: -1.0})
    w.end()
    path = w.save(tmp("columns.vor"))
    out, _, _ = vor("export", path, "--format", "csv")
    lines = out.splitlines()
    equal(lines[0], f"index,start_ms,duration_ms,frame_ms (ms),five (u),nine,{long_name}", "header: declared columns only")
    equal(len(lines), 4, "rows")
    equal(lines[1].split(",")[3:], ["0.001", "1.5", "", "2"], "row 0")
    equal(lines[2].split(",")[3:], ["0.001", "2.5", "", ""], "row 1 (4095 not listed in this frame)")
    equal(lines[3].split(",")[3:], ["0.001", "3.5", "-1", ""], "row 2")
    s = json.loads(vor("summary", path, "--json")[0])
    equal([m["name"] for m in s["metrics"]], ["frame_ms", "five", "nine", long_name], "metrics")


def test_rename():
    """A thread renamed mid-run carries its newest name in every output; two threads that
    end with the same name merge."""
    w = CaptureWriter()
    sites = [(1, "work", "", "", 0)]
    w.frame(duration=1000, sites=sites, threads=[(1, "before", 0), (2, "other", 0)],
            flame={1: [(1, 0, 100, 10)], 2: [(1, 0, 100, 1)]})
    w.frame(duration=1000, flame={1: [(1, 0, 1100, 20)]})
    w.frame(duration=1000, threads=[(1, "after", 0), (2, "after", 0)], flame={1: [(1, 0, 2100, 40)]})
    w.end()
    path = w.save(tmp("rename.vor"))
    _, f, _ = every_command(path, "rename.svg")
    equal(f, {"after;work": 71.0}, "folded: the newest name, threads of one name merged")
    titles = " ".join(svg_titles(tmp("rename.svg")))
    check("before" not in titles and "after (" in titles, f"flamegraph: the newest name: {titles}")
    vor("flamegraph", path, "-o", tmp("rename-t.svg"), "--thread", "after")
    vor("flamegraph", path, "-o", tmp("rename-t.svg"), "--thread", "before", expect=2)


def test_escapes():
    """Names with ESC, BEL and newlines reach no text output raw; folded keeps reading back."""
    odd = "a\x1b]0;pwned\x07b\nc;d"
    w = CaptureWriter()
    w.frame(duration=1000, sites=[(1, odd, "", "", 0), (2, "plain", "", "", 0)], threads=[(1, "th\x1b[31m", 0)],
            flame={1: [(2, 1, 100, 10), (1, 0, 100, 50)]})
    w.end()
    path = w.save(tmp("escapes.vor"))
    for args in (["export", path, "--format", "folded"], ["summary", path], ["diff", path, path]):
        _, _, raw = vor(*args)
        check(b"\x1b" not in raw and b"\x07" not in raw, f"vor {' '.join(args)}: raw control characters: {raw!r}")
    out, _, _ = vor("export", path, "--format", "folded")
    equal(folded(out), {"th\\x1b[31m;a\\x1b]0:pwned\\x07b\\nc:d": 40.0, "th\\x1b[31m;a\\x1b]0:pwned\\x07b\\nc:d;plain": 10.0},
          "escaped names, ';' as ':'")
    # The folded text reads back into a flame graph.
    stacks = tmp("escapes.folded")
    with open(stacks, "w") as fh:
        fh.write(out)
    vor("flamegraph", "--folded", stacks, "-o", tmp("escapes.svg"))


def test_progress():
    """Progress on long work with few frames: six frames of a million scopes each (a small
    file: records compress 250 times). The command takes well over 100 ms; with stderr on a
    terminal a progress line shows and is erased at the end. (It used to be looked at once
    every 256 frames only: never here.)"""
    import pty
    import select
    w = CaptureWriter(compress=True)
    for k in range(6):
        w.frame(duration=1000, sites=[(1, "tick", "", "", 0)] if k == 0 else (),
                threads=[(1, "main", 0)] if k == 0 else (), flame={1: [(1, 0, 1000 * k + 10, 0)] * 1_000_000})
    w.end()
    path = w.save(tmp("progress.vor"))
    for args in (["summary", path], ["export", path, "--format", "folded", "-o", tmp("progress.folded")]):
        master, slave = pty.openpty()
        p = subprocess.Popen([ARGS.vor, *args], stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        equal(p.wait(timeout=120), 0, f"vor {' '.join(args)}")
        check(re.search(rb"\rvor \w+: .*progress\.vor: [0-9,]+ frames, [0-9]+%", seen),
              f"vor {' '.join(args)}: no progress line on the terminal: {seen!r}")
        check(seen.endswith(b"\r\x1b[K"), f"vor {' '.join(args)}: the progress line is erased: {seen[-40:]!r}")


def max_rss_kb(args):
    """Runs vor with `args` in a process of its own and returns (exit status, stderr, the
    peak resident memory of vor in KB)."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
            "sys.stderr.buffer.write(p.stderr)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    p = subprocess.run([sys.executable, "-c", code, ARGS.vor, *args], capture_output=True, text=True, timeout=300)
    rc, kb = p.stdout.split()
    return int(rc), p.stderr, int(kb)


def test_amplification():
    """Issue 17.9: a capture of a few hundred KB whose one record decodes to 64 MiB listing
    16 million scopes. Every command refuses the frame before allocating for it (one
    message naming the frame and --max-frame-scopes) and stays within about the 64 MiB
    record plus its own baseline; it used to take over 500 MB."""
    w = CaptureWriter(minor=1, compress=True)
    w.frame(duration=1000, sites=[(1, "tick", "", "", 0)], threads=[(1, "main", 0)],
            flame={1: [(1, 0, 10, 0)] * 16_000_000})
    w.end()
    path = w.save(tmp("amplification.vor"))
    check(os.path.getsize(path) < 300_000, f"a small file: {os.path.getsize(path)} bytes")
    limit_kb = 400_000 if ARGS.sanitized else 160_000
    for args in (["summary", path], ["export", path, "--format", "folded"], ["export", path, "--format", "chrome"],
                 ["export", path, "--format", "csv"], ["flamegraph", path, "-o", tmp("amp.svg")],
                 ["diff", path, path], ["tail", path, "--from-start"]):
        rc, err, kb = max_rss_kb(args)
        equal(rc, 2, f"vor {' '.join(args)}: exit status ({err!r})")
        check("frame 0 holds more than 1048576 scopes" in err and "--max-frame-scopes" in err,
              f"vor {' '.join(args)}: the message: {err!r}")
        check(kb < limit_kb, f"vor {' '.join(args)}: {kb} KB of memory for a {os.path.getsize(path)}-byte capture")
    # Just over the default: refused, and read with a bound it fits in.
    w = CaptureWriter(minor=1, compress=True)
    w.frame(duration=1000, sites=[(1, "tick", "", "", 0)], threads=[(1, "main", 0)],
            flame={1: [(1, 0, 10, 0)] * 1_100_000})
    w.end()
    path = w.save(tmp("just_over.vor"))
    rc, err, kb = max_rss_kb(["summary", path, "--top", "0"])
    check(rc == 2 and "frame 0 holds more than 1048576 scopes" in err, f"just over the default: {err!r}")
    rc, err, kb = max_rss_kb(["summary", path, "--max-frame-scopes", "1100000", "--top", "0"])
    equal(rc, 0, f"--max-frame-scopes 1100000 ({err!r})")


def reads_format_1_1():
    """Whether this build's reader reads format 1.1 (the tests of 1.1 fields skip before)."""
    w = CaptureWriter(minor=1)
    w.frame(duration=1000)
    path = w.save(tmp("probe-1.1.vor"))
    p = subprocess.run([ARGS.dump, "--tsv", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode == 0 and b"end\t1\tok" in p.stdout


class Skip(Exception):
    pass


def v11_capture(name, **header):
    """Two frames of format 1.1 with what 1.0 cannot say: scopes open at a frame's end (run
    and step span the mark), drops by cause and thread, a function site, calibrated costs."""
    if not reads_format_1_1():
        raise Skip("this build's reader does not read format 1.1 yet")
    w = CaptureWriter(minor=1, **header)
    sites = [(1, "run", "", "", 0), (2, "step", "", "", 0), (3, "child before the mark", "", "", 0),
             (4, "child after the mark", "", "", 0), (5, "fn", "fn", "", 0, 1, 0x1234)]
    decl = dict(sites=sites, threads=[(1, "main", 0), (2, "worker", 0)], modules=[(1, "/bin/x", "ab12", 0x400000)])
    w.frame(duration=1000, start=1000, overhead=100, **decl,
            flame={1: [(3, 2, 1100, 200), ("open", 1, 0), ("open", 2, 1050)], 2: [(2, 0, 1200, 100)]},
            drops=[(1, 2, 5), (2, 1, 2), (6, 1, 9)], dropped=7)
    w.frame(duration=1000, overhead=100, **decl,
            flame={1: [(4, 2, 2100, 300), (5, 2, 2400, 50, 1), (2, 1, 1050, 1450), ("open", 1, 0)]},
            drops=[(1, 2, 3)], dropped=3)
    w.end()
    return w.save(tmp(name))


def test_v11():
    """Format 1.1 through every command: true stacks across the mark, drops by cause and
    thread, the clock, compensation on (and --raw), damaged records listed."""
    path = v11_capture("v11.vor", clock_resolution_ns=1, clock_source="tsc", scope_cost_ns=20.0,
                       function_cost_ns=30.0)
    s, f, d = every_command(path, "v11.svg")
    # Frame 0: run 1000, step 950 (child 200): run self 1000 - 950 - 20 = 30, step 950 - 200 - 20 = 730.
    # Frame 1: step 500 (children 300 and 50; costs 20 and 30): 100; run 1000 - 500 - 20 = 480.
    equal(f, {"main;run": 510.0, "main;run;step": 830.0, "main;run;step;child before the mark": 200.0,
              "main;run;step;child after the mark": 300.0, "main;run;step;fn": 50.0, "worker;step": 100.0},
          "folded: the true stacks, compensated")
    raw = folded(vor("export", path, "--format", "folded", "--raw")[0])
    equal((raw["main;run"], raw["main;run;step"]), (550.0, 900.0), "folded --raw")
    equal(s["compensation"], {"on": True, "scope_cost_ns": 20.0, "function_cost_ns": 30.0, "times": "compensated"},
          "summary compensation")
    equal(s["clock"], {"resolution_ns": 1, "source": "tsc", "cross_origin_isolated": None}, "summary clock")
    drops = s["drops"]
    equal((drops["total"], drops["frames"], drops["cause_not_recorded"], drops["filtered"]), (10, 2, 0, 9), "drops")
    equal([(e["cause"], e["thread"], e["count"], e["first_frame"], e["last_frame"]) for e in drops["by_cause"]],
          [("thread_buffer_full", "worker", 8, 0, 1), ("too_deep", "main", 2, 0, 0)], "drops by cause and thread")
    text = vor("summary", path)[0]
    for needle in ("clock     tsc, resolution 1 ns", "8  the thread's buffer was full, thread worker, frames 0 to 1",
                   "times     compensated", "(compensated: less the profiler's own time)"):
        check(needle in text, f"summary text lacks {needle!r}:\n{text}")
    check("dropped by the writer" not in text, "no cause invented")
    equal([m["compensated"] for m in s["metrics"]], [True], "frame_ms compensated")
    check(abs(s["metrics"][0]["max"] - 0.0009) < 1e-15, f"frame_ms less the overhead (1000 - 100 ns): {s['metrics'][0]}")
    titles = " ".join(svg_titles(tmp("v11.svg")))
    check("before the mark" in titles and PLACEHOLDER_TEXT not in titles, f"flamegraph: {titles}")
    with open(tmp("v11.svg"), encoding="utf-8") as fh:
        svg = fh.read()
    check("10 scopes dropped (thread_buffer_full: 8; too_deep: 2)" in svg and "compensated" in svg,
          "the SVG's notes say what was dropped and that times are compensated")
    equal(d["a"]["drops"]["total"], 10, "diff: drops")
    check(d["a"]["compensated"], "diff: compensated")
    # A page that was not cross-origin isolated says so.
    page = v11_capture("v11-page.vor", clock_resolution_ns=100000, clock_source="performance.now",
                       cross_origin_isolated=1)
    s = json.loads(vor("summary", page, "--json")[0])
    equal(s["clock"], {"resolution_ns": 100000, "source": "performance.now", "cross_origin_isolated": False},
          "a page's clock")
    equal(s["compensation"]["on"], False, "no costs: raw")
    check("not cross-origin isolated" in vor("summary", page)[0], "the text says the page was not isolated")
    # A damaged record: skipped, listed with its offset, the rest read.
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    body = int.from_bytes(data[12:16], "little")
    first = 24 + body
    second = first + 10 + (int.from_bytes(data[first:first + 4], "little") & 0x7FFFFFFF)
    data[second + 20] ^= 0x40
    damaged = tmp("v11-damaged.vor")
    with open(damaged, "wb") as fh:
        fh.write(data)
    s = json.loads(vor("summary", damaged, "--json")[0])
    equal(s["frames"], 1, "one frame lost")
    equal(s["damaged_records"]["count"], 1, "damage counted")
    equal(s["damaged_records"]["records"][0]["offset"], second, "damage located")
    check(f"at byte {second}" in vor("summary", damaged)[0], "the text names the offset")


PLACEHOLDER_TEXT = "[parent not recorded]"


TESTS = {name[5:]: fn for name, fn in globals().items() if name.startswith("test_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--vor", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--sanitized", action="store_true", help="vor is built with ASan (more memory)")
    ARGS = ap.parse_args()
    ARGS.tmp = os.path.join(ARGS.tmp, ARGS.test)
    try:
        TESTS[ARGS.test]()
    except Failure as e:
        print(f"FAIL crafted_{ARGS.test}: {e}")
        return 1
    except Skip as e:
        print(f"SKIP crafted_{ARGS.test}: {e}")
        return 77
    print(f"ok crafted_{ARGS.test}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
