#!/usr/bin/env python3
"""test_cli_speedscope.py: `vor export --format speedscope` and `--frames A..B` on real captures.

    test_cli_speedscope.py --vor PATH --workload PATH --tmp DIR --schema FILE [--node PATH --speedscope DIR]

Captures come from cli_capture_workload (tests/cli/capture_workload.c): a plain one, one whose
"step" scope spans each frame mark (--span-mark), and one recorded one frame in three with
pauses (VOR_RECORD_EVERY=3, --pause: runs broken). For each, compensated and --raw:
  - the file obeys speedscope's published schema (file-format-schema.json, read from the
    speedscope package and applied by the small validator below: the keywords it uses);
  - the rules the schema cannot say: events in time order, every close matching the open
    on top, nothing left open, every time within [startValue, endValue], frame indices in
    range, one frame per (name, file, line), file and line out of names, one profile per
    thread;
  - per scope name, total and self time computed here from the events (recursion counted
    once) equal `vor summary --json` (and `--raw`) exactly;
  - a scope spanning frame marks is one block per call, not one per frame;
  - with --node and --speedscope, speedscope's own importer (speedscope_import.mjs) reads
    the file and its per-frame totals and self times are the same.
Then --frames: speedscope, folded, chrome and csv export only frames A..B (speedscope's
self times equal folded's over the same frames), and bad ranges are refused with one line.
Exit status: 0 passed, 1 failed, 77 skipped (no speedscope package: only the importer part).
"""
import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, equal  # noqa: E402

ARGS = None


def run(cmd, env=None, timeout=120):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def vor(*args):
    return run([ARGS.vor, *args])


def make_capture(name, frames, options=(), env_extra=None):
    os.makedirs(ARGS.tmp, exist_ok=True)
    path = os.path.join(ARGS.tmp, name)
    if os.path.exists(path):
        os.remove(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
    env.update({"VOR_RECORD": path, "VOR_RECORD_FLAME": "1"}, **(env_extra or {}))
    rc, out, err = run([ARGS.workload, str(frames), *options], env=env)
    check(rc == 0, f"workload failed ({rc}): {err}")
    return path


# ---- speedscope's schema, applied by the keywords it uses ---------------------------------------

def validate(value, schema, root, where="$"):
    for key in schema:
        check(key in ("$ref", "anyOf", "const", "enum", "items", "properties", "required", "title", "type",
                      "$schema", "definitions"), f"the schema uses '{key}', which this validator does not know")
    if "$ref" in schema:
        ref = schema["$ref"]
        check(ref.startswith("#/definitions/"), f"unexpected $ref {ref}")
        validate(value, root["definitions"][ref[len("#/definitions/"):]], root, where)
    if "anyOf" in schema:
        errors = []
        for option in schema["anyOf"]:
            try:
                validate(value, option, root, where)
                break
            except Failure as e:
                errors.append(str(e))
        else:
            raise Failure(f"{where}: matches none of anyOf: {errors}")
    if "const" in schema:
        equal(value, schema["const"], where)
    if "enum" in schema:
        check(value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}")
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        ok = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool), "null": lambda v: v is None}
        check(any(ok[k](value) for k in kinds), f"{where}: {value!r:.60} is not {kinds}")
    if "required" in schema and isinstance(value, dict):
        for key in schema["required"]:
            check(key in value, f"{where}: required '{key}' missing")
    if "properties" in schema and isinstance(value, dict):
        for key, sub in schema["properties"].items():
            if key in value:
                validate(value[key], sub, root, f"{where}.{key}")
    if "items" in schema and isinstance(value, list):
        for i, item in enumerate(value):
            validate(item, schema["items"], root, f"{where}[{i}]")


# ---- what the events say ---------------------------------------------------------------------

def read_events(doc):
    """Per name: total (recursion once) and self over all profiles, and the O count per name;
    checks order and nesting on the way."""
    frames = doc["shared"]["frames"]
    total, self_, opens = collections.Counter(), collections.Counter(), collections.Counter()
    for prof in doc["profiles"]:
        equal(prof["type"], "evented", "profile type")
        equal(prof["unit"], "nanoseconds", "unit")
        lo, hi = prof["startValue"], prof["endValue"]
        check(lo <= hi, f"startValue {lo} > endValue {hi}")
        stack, last = [], lo
        for ev in prof["events"]:
            at, fr = ev["at"], ev["frame"]
            check(isinstance(at, int) and lo <= at <= hi, f"{prof['name']}: at {at} outside [{lo}, {hi}]")
            check(at >= last, f"{prof['name']}: events out of order ({at} after {last})")
            check(0 <= fr < len(frames), f"frame index {fr} out of range")
            last = at
            if ev["type"] == "O":
                stack.append((fr, at, [0]))
                opens[frames[fr]["name"]] += 1
            else:
                check(stack and stack[-1][0] == fr, f"{prof['name']}: close of {fr} while {stack[-1:] } is open")
                fr0, start, children = stack.pop()
                d = at - start
                name = frames[fr]["name"]
                self_[name] += d - children[0]
                if all(frames[s[0]]["name"] != name for s in stack):
                    total[name] += d
                if stack:
                    stack[-1][2][0] += d
        check(not stack, f"{prof['name']}: {len(stack)} frames left open")
    return total, self_, opens


def check_file(doc, schema):
    validate(doc, schema, schema)
    equal(doc["$schema"], "https://www.speedscope.app/file-format-schema.json", "$schema")
    keys = [(f["name"], f.get("file"), f.get("line")) for f in doc["shared"]["frames"]]
    equal(len(keys), len(set(keys)), "frames are shared: one per (name, file, line)")
    for f in doc["shared"]["frames"]:
        if f.get("file"):
            check(f["file"] not in f["name"] and ".c:" not in f["name"], f"file in the name {f['name']!r}")
    names = [p["name"] for p in doc["profiles"]]
    equal(sorted(names), ["main", "worker"], "one profile per thread")


def summary(path, raw):
    rc, out, err = vor("summary", path, "--json", "--top", "1000", *(["--raw"] if raw else []))
    equal((rc, err), (0, ""), "vor summary")
    d = json.loads(out)
    return {t["name"]: t for t in d["top_by_total"]}, d


def check_against_summary(path, doc, raw):
    total, self_, opens = read_events(doc)
    want, _ = summary(path, raw)
    equal(sorted(total), sorted(want), "names")
    for name, t in want.items():
        equal(total[name], t["total_ns"], f"{name}: total (raw={raw})")
        equal(self_[name], t["self_ns"], f"{name}: self (raw={raw})")
    return opens, want


def speedscope_import(path):
    rc, out, err = run([ARGS.node, os.path.join(os.path.dirname(os.path.abspath(__file__)), "speedscope_import.mjs"),
                        ARGS.speedscope, path])
    equal((rc, err), (0, ""), "speedscope's importer")
    return json.loads(out)


def test_exports(schema):
    captures = [
        ("plain.vor", 400, [], None),  # 400 frames: events beyond 64 KiB per thread spill
        ("span.vor", 40, ["--span-mark"], None),
        ("every3.vor", 60, ["--span-mark", "--pause"], {"VOR_RECORD_EVERY": "3"}),
    ]
    imported = 0
    for name, frames, options, env in captures:
        path = make_capture(name, frames, options, env)
        for raw in (False, True):
            out = path + (".raw" if raw else "") + ".speedscope.json"
            rc, _, err = vor("export", path, "--format", "speedscope", "-o", out, *(["--raw"] if raw else []))
            equal((rc, err), (0, ""), f"export {name}")
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            check_file(doc, schema)
            opens, want = check_against_summary(path, doc, raw)
            if "--span-mark" in options:
                # One block per call of a scope that spans frame marks (and one for "run",
                # when every frame is recorded); a block cut per frame would give more.
                calls = want["step"]["calls"]
                check(calls > 3, f"step calls {calls}")
                if env is None:
                    check(opens["step"] in (calls, calls + 1), f"step: {opens['step']} blocks for {calls} calls")
                    equal(opens["run"], 1, "run: one block")
                else:
                    # One frame in three: every recorded frame is a run of its own, so "run"
                    # is one block per flame frame and "step" at most two (its start, its end).
                    check(opens["run"] > 5, f"run: {opens['run']} blocks in separate runs")
                    check(opens["step"] <= 2 * opens["run"], f"step: {opens['step']} blocks in {opens['run']} frames")
            if ARGS.speedscope:
                got = speedscope_import(out)
                equal(got["warnings"], [], "speedscope's warnings")
                equal(sorted(p["name"] for p in got["profiles"]), ["main", "worker"], "speedscope's profiles")
                by_name = collections.defaultdict(lambda: [0, 0])
                for p in got["profiles"]:
                    equal(p["unit"], "nanoseconds", "speedscope's unit")
                    for fr in p["frames"]:
                        check(fr["file"] and fr["file"].endswith("capture_workload.c") and fr["line"] > 0,
                              f"speedscope's frame {fr}: file and line")
                        by_name[fr["name"]][0] += fr["total"]
                        by_name[fr["name"]][1] += fr["self"]
                for n, t in want.items():
                    equal(by_name[n], [t["total_ns"], t["self_ns"]], f"speedscope's total and self of {n}")
                imported += 1
    return imported


def test_chrome_names():
    """speedscope reads `vor export --format chrome` with the scopes' own names: vor's
    additions (source file and line, clipping flags) are not args, which speedscope would
    fold into the names (`render {"file":...}`), one frame per site and per flag."""
    path = make_capture("chrome.vor", 30, ["--span-mark"])
    out = os.path.join(ARGS.tmp, "chrome.json")
    rc, _, err = vor("export", path, "--format", "chrome", "-o", out)
    equal(rc, 0, f"export chrome: {err}")
    want, _ = summary(path, True)
    # (speedscope may warn here: it adds ts + dur in floating point, so an event ending
    # where the next begins can seem to end after it; that is its reading of any Chrome
    # trace, not the names checked here.)
    got = speedscope_import(out)
    scope_names = set()
    for p in got["profiles"]:
        names = {fr["name"] for fr in p["frames"]}
        if names == {"frame"}:  # the frames row
            continue
        scope_names |= names
    equal(sorted(scope_names), sorted(want), "speedscope's names of the Chrome export's scopes")


def test_huge_durations():
    """Durations near 2^63 (written byte by byte, craft_capture.py) and children longer than
    their parent: the timeline saturates instead of wrapping; the file stays ordered, nested
    and within [startValue, endValue]."""
    from craft_capture import CaptureWriter
    g = 1 << 61
    w = CaptureWriter()
    sites = [(1, "top", "", "", 0), (2, "kid", "", "", 0), (3, "rec", "", "", 0)]
    for k in range(3):
        s0 = k * g
        scopes = [(2, 1, s0, g - 10)] * 5 + [(1, 0, s0, g)] + [(3, 3, s0, g), (3, 2, s0, g), (3, 1, s0, g), (3, 0, s0, g)]
        w.frame(duration=g, start=s0, sites=sites if k == 0 else (), threads=[(0, "main", 0)] if k == 0 else (),
                flame={0: scopes})
    w.end()
    path = w.save(os.path.join(ARGS.tmp, "huge.vor"))
    rc, out, err = vor("export", path, "--format", "speedscope")
    equal((rc, err), (0, ""), "export of huge durations")
    doc = json.loads(out)
    read_events(doc)  # order, nesting, range
    for prof in doc["profiles"]:
        check(all(0 <= e["at"] <= (1 << 63) - 1 for e in prof["events"]), "times saturate, never wrap")


def folded_self(text):
    out = collections.Counter()
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        out[stack.split(";")[-1]] += int(value)
    return out


def test_frames():
    path = make_capture("range.vor", 40, ["--span-mark"])
    rc, out, err = vor("export", path, "--format", "speedscope", "--frames", "10..19")
    equal((rc, err), (0, ""), "speedscope --frames")
    _, self_, _ = read_events(json.loads(out))
    rc, out, err = vor("export", path, "--format", "folded", "--frames", "10..19", "--no-thread")
    equal((rc, err), (0, ""), "folded --frames")
    fs = folded_self(out)
    equal(dict(self_), dict(fs), "speedscope and folded agree on frames 10..19")
    rc, out, err = vor("export", path, "--format", "folded", "--no-thread")
    check(sum(folded_self(out).values()) > sum(fs.values()), "the range holds less than the whole capture")

    rc, out, err = vor("export", path, "--format", "chrome", "--frames", "10..19")
    equal((rc, err), (0, ""), "chrome --frames")
    events = json.loads(out)
    idx = sorted({int(e["cat"].split(",")[1].removeprefix("index:")) for e in events
                  if e.get("ph") == "X" and e.get("cat", "").startswith("vor.frame,")})
    equal(idx, list(range(10, 20)), "chrome: frame events of frames 10..19")
    run = [e for e in events if e.get("ph") == "X" and e.get("name") == "run"]
    equal(len(run), 1, "chrome: run, open through the range, written once")
    cats = run[0]["cat"].split(",")
    check("clipped_start" in cats and "clipped_end" in cats, f"chrome: run cut at the range's ends: {run[0]['cat']}")

    rc, out, err = vor("export", path, "--format", "csv", "--frames", "..4")
    equal((rc, err), (0, ""), "csv --frames")
    equal([int(line.split(",")[0]) for line in out.splitlines()[1:]], [0, 1, 2, 3, 4], "csv rows")
    rc, out, err = vor("export", path, "--format", "csv", "--frames", "37")
    equal([line.split(",")[0] for line in out.splitlines()[1:]], ["37"], "csv --frames 37")

    for bad in ("19..10", "abc", "1..2..3", "..", "-1..3", ""):
        rc, out, err = vor("export", path, "--format", "folded", "--frames", bad)
        equal(rc, 2, f"--frames {bad!r}")
        equal(err, f"vor export: --frames: '{bad}' is not a frame range (A..B, A.., ..B or A, with A <= B); "
                   "see 'vor export --help'\n", f"--frames {bad!r}")
    for fmt in ("chrome", "folded", "csv", "speedscope"):
        out_path = os.path.join(ARGS.tmp, "none." + fmt)
        rc, out, err = vor("export", path, "--format", fmt, "--frames", "500..600", "-o", out_path)
        equal((rc, err), (2, f"vor export: {path}: --frames 500..600 selects no frame: the capture's frames are 0 "
                             "to 39\n"), f"{fmt}: an empty range")
        check(not os.path.exists(out_path), f"{fmt}: no output for an empty range")
    rc, out, err = vor("export", path, "--format", "csv", "--raw")
    equal(rc, 2, "csv --raw")
    check("--raw applies to --format folded and speedscope" in err, err)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--vor", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--node")
    ap.add_argument("--speedscope")
    ARGS = ap.parse_args()
    if not (ARGS.node and ARGS.speedscope and os.path.isfile(ARGS.schema)):
        print("SKIP: the speedscope npm package (npm ci) and node are needed: its schema and importer")
        return 77
    with open(ARGS.schema, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        imported = test_exports(schema)
        check(imported == 6, f"speedscope's importer read {imported} files")
        test_frames()
        test_chrome_names()
        test_huge_durations()
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
