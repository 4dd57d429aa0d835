#!/usr/bin/env python3
"""check_outputs.py: reads back what `vor` made of a third-party driver's capture (run.sh).

  check_outputs.py outputs SUMMARY.json FOLDED.txt FLAME.svg
      the summary parses, has flame frames, and no negative total or self time; every line
      of the folded export is `stack NS` with NS >= 0; the flame graph is well-formed XML
      (the strict expat parser) holding the summary's top scope by total time.
  check_outputs.py diff DIFF.json MIN_PERCENT [NAMES...]
      `vor diff --json` of the native (A) and the wasm (B) run: of the names recorded in
      either, at least MIN_PERCENT are recorded in both; the ones that are not are listed.
      NAMES are the hand-placed scopes, left out of the count (functions are what is
      compared), but each must be in both.
Exit status 0 when every check passes, 1 otherwise.
"""
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def check_outputs(summary_path, folded_path, svg_path):
    with open(summary_path, encoding="utf-8") as f:
        summary = json.load(f)
    if not summary.get("flame_frames"):
        fail(f"{summary_path}: no flame frames")
    rows = summary.get("top_by_total", []) + summary.get("top_by_self", [])
    if not rows:
        fail(f"{summary_path}: no scopes in the summary")
    for row in rows:
        for key in ("total_ns", "self_ns"):
            if key in row and row[key] < 0:
                fail(f"{summary_path}: {row['name']} has {key} {row[key]}")
    stacks = 0
    with open(folded_path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stack, _, value = line.rstrip("\n").rpartition(" ")
            if not stack or not value.isdigit():
                fail(f"{folded_path}:{number}: not `stack NS` with NS >= 0: {line!r}")
            stacks += 1
    if stacks == 0:
        fail(f"{folded_path}: no stacks")
    titles = [t.text or "" for t in ET.parse(svg_path).getroot().iter(SVG + "title")]
    top = summary["top_by_total"][0]["name"]
    if not any(t.startswith(top) for t in titles):
        fail(f"{svg_path}: no frame titled {top!r} among {len(titles)} titles")
    print(f"summary: {summary['flame_frames']} flame frames, {summary.get('scopes')} scopes; "
          f"folded: {stacks} stacks; flame graph: {len(titles)} frames")


def check_diff(diff_path, min_percent, hand_names):
    with open(diff_path, encoding="utf-8") as f:
        diff = json.load(f)
    recorded = {"a": set(), "b": set()}
    for row in diff["scopes"]:
        for side in ("a", "b"):
            if row[side]["calls"] > 0:
                recorded[side].add(row["name"])
    for name in hand_names:
        if name not in recorded["a"] or name not in recorded["b"]:
            fail(f"the hand-placed scope {name!r} is not in both runs")
    a = recorded["a"] - set(hand_names)
    b = recorded["b"] - set(hand_names)
    union, both = a | b, a & b
    percent = 100.0 * len(both) / len(union) if union else 0.0
    print(f"{len(union)} functions recorded: {len(both)} in both runs ({percent:.2f}%), "
          f"{len(a - b)} only natively, {len(b - a)} only in wasm")
    for label, names in (("only natively", a - b), ("only in wasm", b - a)):
        if names:
            print(f"  {label}: {' '.join(sorted(names)[:40])}")
    if not union or percent < min_percent:
        fail(f"fewer than {min_percent}% of the functions match by name")


def main(argv):
    if len(argv) == 5 and argv[1] == "outputs":
        check_outputs(argv[2], argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "diff":
        check_diff(argv[2], float(argv[3]), argv[4:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
