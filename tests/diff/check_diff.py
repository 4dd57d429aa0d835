#!/usr/bin/env python3
"""check_diff.py VOR MAKE_CAPTURES TMPDIR: `vor diff` on two synthetic captures with known
durations (make_diff_captures.c) must give the figures computed here by hand, write a
well-formed differential SVG with slower (red) and faster (blue) frames, and refuse bad input."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

vor, make, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
a, b, svg = (os.path.join(tmp, n) for n in ("a.vor", "b.vor", "diff.svg"))
subprocess.run([make, a, b], check=True)

out = subprocess.run([vor, "diff", a, b, "--json", "--svg", svg], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
table = json.loads(out.stdout)
assert table["a"]["flame_frames"] == 4 and table["b"]["flame_frames"] == 5, table
rows = {r["name"]: r for r in table["scopes"]}

def side(name, key):
    return rows[name][key]

# By hand. A: step 1000 x4; work 600 x4; io 100 in 2 of 4 frames.
# B: step 2000 x5; work 1500 x4 + (1000 + 500) in frame 4 -> 1500 per frame, 6 calls; new 50 x5.
expected = {
    "step": ((4, 4000, 1000.0, 1000), (5, 10000, 2000.0, 2000)),
    "work": ((4, 2400, 600.0, 600), (6, 7500, 1500.0, 1500)),
    "io":   ((2, 200, 50.0, 100), (0, 0, 0.0, 0)),
    "new":  ((0, 0, 0.0, 0), (5, 250, 50.0, 50)),
}
assert set(rows) == set(expected), sorted(rows)
for name, (ea, eb) in expected.items():
    for key, e in (("a", ea), ("b", eb)):
        got = side(name, key)
        assert (got["calls"], got["total_ns"], got["mean_ns"], got["p95_ns"]) == e, (name, key, got, e)
assert rows["step"]["ratio"] == 2.0 and rows["work"]["ratio"] == 2.5
assert rows["io"]["ratio"] == 0.0 and rows["new"]["ratio"] is None
# Sorted by the largest change in time per frame: step (+1000), work (+900), io (-50), new (+50).
assert [r["name"] for r in table["scopes"]][:2] == ["step", "work"], [r["name"] for r in table["scopes"]]

# The text table agrees (ms with 3 decimals, B/A column).
text = subprocess.run([vor, "diff", b, a, "--top", "1"], capture_output=True, text=True, check=True).stdout
line = next(l for l in text.splitlines() if l.startswith("step"))
assert line.split()[-1] == "0.50x", line
assert len([l for l in text.splitlines() if l and l.split()[0] in expected]) == 1  # --top 1

# The differential SVG: well-formed, red for the slower scopes, blue for the one that went away.
root = ET.parse(svg).getroot()
fills = {}
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    title = g.find("{http://www.w3.org/2000/svg}title")
    rect = g.find("{http://www.w3.org/2000/svg}rect")
    if title is not None and rect is not None:
        fills[title.text.split(" (")[0]] = rect.get("fill")
def rgb(c):
    c = c.strip()
    if c.startswith("rgb("):
        return tuple(int(x) for x in c[4:-1].split(","))
    return tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
r, g, bl = rgb(fills["step"])
assert r > bl, ("step should be red (slower in B)", fills["step"])
r, g, bl = rgb(fills["work"])
assert r > bl, ("work should be red", fills["work"])

# The SVG merges threads (a modelling choice): said in its subtitle and in the help.
texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
assert "threads merged; stacks match by name path" in texts, texts
help_text = subprocess.run([vor, "diff", "--help"], capture_output=True, text=True, check=True).stdout
assert "Threads are merged: stacks match by name path" in help_text, help_text

# Bad input: one clear message naming the file, exit 2.
notcap = os.path.join(tmp, "notes.txt")
open(notcap, "w").write("not a capture\n")
bad = subprocess.run([vor, "diff", a, notcap], capture_output=True, text=True)
assert bad.returncode == 2 and notcap in bad.stderr and "not a vor capture" in bad.stderr, bad.stderr
one = subprocess.run([vor, "diff", a], capture_output=True, text=True)
assert one.returncode == 2 and "two captures" in one.stderr, one.stderr
print("vor diff: figures, ordering, SVG colours and errors as computed by hand")
