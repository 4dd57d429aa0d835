#!/usr/bin/env python3
"""check_flamegraph.py VOR MAKE_CAPTURES TMPDIR: `vor flamegraph` on a capture with known
durations (make_diff_captures.c, capture A): the SVG is well-formed, has one frame per
merged stack with the folded totals (the same as `vor export --format folded`), honours
--frames and --thread, reads --folded stacks, and refuses bad input with exit 2."""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

vor, make, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
a, b = os.path.join(tmp, "a.vor"), os.path.join(tmp, "b.vor")
subprocess.run([make, a, b], check=True)
NS = "{http://www.w3.org/2000/svg}"

def frames(svg_path):
    """{name: (value text, rect width)} for every drawn frame."""
    root = ET.parse(svg_path).getroot()
    out = {}
    for g in root.iter(NS + "g"):
        t, r = g.find(NS + "title"), g.find(NS + "rect")
        if t is None or r is None:
            continue
        m = re.match(r"(.*) \(([^,]+), ([0-9.]+)%\)", t.text)
        if m:
            out[m.group(1)] = (m.group(2), float(r.get("width")), float(m.group(3)))
    return out

def run(*args):
    return subprocess.run([vor, *args], capture_output=True, text=True)

svg = os.path.join(tmp, "a.svg")
p = run("flamegraph", a, "-o", svg, "--deterministic")
assert p.returncode == 0, p.stderr
f = frames(svg)
# Capture A, 4 frames: step 1000 ns each (work 600 inside), io 100 ns in two frames.
assert f["main"][0] == "4.20 µs" and f["step"][0] == "4.00 µs" and f["work"][0] == "2.40 µs" and f["io"][0] == "200 ns", f
# Widths are proportional to the totals.
w = f["main"][1]
for name, total in (("step", 4000), ("work", 2400), ("io", 200)):
    assert abs(f[name][1] / w - total / 4200) < 0.01, (name, f[name][1] / w)
# The same stacks as the folded export.
folded = run("export", a, "--format", "folded").stdout.split("\n")
assert "main;step;work 2400" in folded and "main;step 1600" in folded and "main;io 200" in folded, folded

# --frames 2..3 keeps the frames without io; --thread selects by name.
p = run("flamegraph", a, "-o", svg, "--frames", "2..3")
assert p.returncode == 0, p.stderr
f = frames(svg)
assert "io" not in f and f["step"][0] == "2.00 µs", f
p = run("flamegraph", a, "-o", svg, "--thread", "nobody")
assert p.returncode == 2 and "no scopes in the frames and threads selected" in p.stderr, p.stderr

# Folded stacks from another profiler.
stacks = os.path.join(tmp, "other.folded")
open(stacks, "w").write("main;parse;lex 30\nmain;eval 20\n")
p = run("flamegraph", "--folded", stacks, "-o", svg)
assert p.returncode == 0, p.stderr
f = frames(svg)
assert f["lex"][0].startswith("30") and f["main"][0].startswith("50"), f

# Bad input.
notcap = os.path.join(tmp, "notes.txt")
open(notcap, "w").write("hello\n")
p = run("flamegraph", notcap, "-o", svg)
assert p.returncode == 2 and notcap in p.stderr and "not a vor capture" in p.stderr, p.stderr
p = run("flamegraph", a, "-o", svg, "--palette", "plaid")
assert p.returncode == 2 and "plaid" in p.stderr, p.stderr
print("vor flamegraph: totals, widths, --frames, --thread, --folded and errors as expected")
