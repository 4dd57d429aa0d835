#!/usr/bin/env python3
"""check_svg.py: reads the flame graph SVGs back and checks them against their folded input.

Run by ctest as test_flamegraph_svg_xml:  check_svg.py PATH/TO/test_flamegraph_render
The render tool takes the `vor flamegraph` options, so every case below goes through the real
command-line parsing, folded reader, tree, layout and SVG writer. Each SVG is parsed with the
strict expat parser (xml.etree) and with minidom, so a malformed document fails the test.
Frames are identified from geometry alone (depth from y, parent from x containment), which is
what a reader of the picture sees, and compared with totals computed here from the input.
"""
import random
import subprocess
import sys
import tempfile
import unittest
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"
FRAME_WIDTH = 1180.0  # default image width 1200 minus 10 px each side
SIDE_PAD = 10.0
FRAME_HEIGHT = 16
EPSILON = 0.011  # x and width are written with two decimals

TOOL = None
WORK = None


def render(folded, *options, name="input.folded", expect_status=0):
    """Writes `folded` (str or bytes), runs the tool, returns (svg bytes, stderr)."""
    path = Path(WORK) / name
    path.write_bytes(folded if isinstance(folded, bytes) else folded.encode())
    out = Path(WORK) / (name + ".svg")
    result = subprocess.run([TOOL, *options, str(path), "-o", str(out)], capture_output=True)
    if result.returncode != expect_status:
        raise AssertionError(f"exit {result.returncode}, expected {expect_status}: "
                             f"{result.stderr.decode(errors='replace')}")
    return (out.read_bytes() if expect_status == 0 else b""), result.stderr.decode()


def render_diff(before, after, *options):
    paths = []
    for label, text in (("before", before), ("after", after)):
        path = Path(WORK) / f"{label}.folded"
        path.write_text(text)
        paths.append(str(path))
    out = Path(WORK) / "diff.svg"
    subprocess.run([TOOL, *options, *paths, "-o", str(out)], check=True)
    return out.read_bytes()


class Frame:
    def __init__(self, group):
        title = group.find(SVG + "title").text
        rect = group.find(SVG + "rect")
        self.title = title
        self.name = title[: title.rindex(" (")]
        self.x = float(rect.get("x"))
        self.width = float(rect.get("width"))
        self.y = int(rect.get("y"))
        self.fill = rect.get("fill")
        self.path = None


def parse(svg_bytes):
    """Parses strictly twice; returns (root element, frames with .path and .depth set)."""
    xml.dom.minidom.parseString(svg_bytes)
    root = ET.fromstring(svg_bytes)
    container = root.find(f".//{SVG}g[@id='frames']")
    frames = [Frame(g) for g in container.findall(SVG + "g")]
    root_frame = next(f for f in frames if f.width >= FRAME_WIDTH - EPSILON and f.name == "all")
    inverted = root_frame.y == min(f.y for f in frames)
    for f in frames:
        f.depth = (f.y - root_frame.y) // FRAME_HEIGHT if inverted else \
            (root_frame.y - f.y) // FRAME_HEIGHT
    by_depth = {}
    for f in frames:
        by_depth.setdefault(f.depth, []).append(f)
    root_frame.path = ()
    for depth in sorted(by_depth)[1:]:
        for f in by_depth[depth]:
            parents = [p for p in by_depth[depth - 1]
                       if p.x - EPSILON <= f.x and f.x + f.width <= p.x + p.width + EPSILON]
            assert len(parents) == 1, f"frame {f.name} at depth {depth} has {len(parents)} parents"
            f.path = parents[0].path + (f.name,)
    return root, frames


def merged_totals(folded, reverse=False):
    """Total per path prefix, as flamegraph.pl merges them."""
    totals = {(): 0.0}
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        if reverse:
            frames.reverse()
        value = float(count)
        totals[()] += value
        for depth in range(1, len(frames) + 1):
            totals[tuple(frames[:depth])] = totals.get(tuple(frames[:depth]), 0.0) + value
    return totals


def random_folded(seed, stacks=3000):
    rng = random.Random(seed)
    names = [f"fn_{i}" for i in range(40)]
    lines = []
    for _ in range(stacks):
        depth = rng.randint(1, 9)
        stack = ";".join(rng.choice(names[: 4 + 4 * d]) for d in range(depth))
        lines.append(f"{stack} {rng.choice([1, 1, 2, 3, 5, 8, 13, 400])}")
    return "\n".join(lines) + "\n"


def rgb(fill):
    return tuple(int(v) for v in fill[4:-1].split(","))


class WellFormed(unittest.TestCase):
    def test_names_with_markup_and_invalid_utf8_still_give_well_formed_xml(self):
        nasty = (b"a<b>&c\"d'e;bad\xff\xfe;half\xc3(;surrogate\xed\xa0\x80;nonchar\xef\xbf\xbe;"
                 b"ctl\x01\x1b;cdata]]>end;ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5 7\n")
        svg, _ = render(nasty, b"--title", b"T<&>\"'\xff", "--notes", "]]> notes",
                        name="nasty.folded")
        root, frames = parse(svg)
        names = [f.name for f in frames]
        self.assertIn("a<b>&c\"d'e", names)
        self.assertIn("bad\ufffd\ufffd", names)
        self.assertIn("half\ufffd(", names)
        self.assertIn("surrogate\ufffd\ufffd\ufffd", names)
        self.assertIn("nonchar\ufffd", names)
        self.assertIn("ctl\ufffd\ufffd", names)
        self.assertIn("cdata]]>end", names)
        self.assertIn("ok \u00e9\u20ac\U0001f525", names)
        self.assertEqual(root.find(f".//{SVG}text[@id='notes']").text, "]]> notes")
        self.assertEqual(root.find(f".//{SVG}text[@id='title']").text, "T<&>\"'\ufffd")


class Geometry(unittest.TestCase):
    def check_widths_match_totals(self, folded, min_width_px=0.1, *options):
        svg, _ = render(folded, *options)
        _, frames = parse(svg)
        totals = merged_totals(folded)
        scale = FRAME_WIDTH / totals[()]
        expected = {path for path, total in totals.items()
                    if all(totals[path[:d]] * scale >= min_width_px for d in range(len(path) + 1))}
        drawn = {f.path: f for f in frames}
        self.assertEqual(len(drawn), len(frames), "two rectangles for one frame")
        self.assertEqual(set(drawn), expected)
        for path, frame in drawn.items():
            self.assertAlmostEqual(frame.width, totals[path] * scale, delta=0.006, msg=str(path))
        return drawn, totals, scale

    def test_one_rectangle_per_merged_frame_with_its_total_width(self):
        self.check_widths_match_totals(random_folded(1))

    def test_frames_below_the_minimum_width_are_omitted(self):
        folded = random_folded(2)
        drawn, totals, scale = self.check_widths_match_totals(folded, 3.0, "--min-width", "3")
        narrow = [p for p, t in totals.items() if t * scale < 3.0]
        self.assertTrue(narrow, "the input should have narrow frames")
        self.assertFalse(any(p in drawn for p in narrow))

    def test_min_width_as_a_percentage(self):
        folded = random_folded(3)
        self.check_widths_match_totals(folded, FRAME_WIDTH * 0.01, "--min-width", "1%")

    def test_merged_siblings_are_sorted_by_name_and_packed_from_the_left(self):
        drawn, totals, scale = self.check_widths_match_totals(random_folded(4))
        for path, frame in drawn.items():
            if not path:
                continue
            siblings = sorted(p for p in totals if len(p) == len(path) and p[:-1] == path[:-1])
            left = drawn[path[:-1]].x + sum(totals[s] for s in siblings[: siblings.index(path)]) * scale
            self.assertAlmostEqual(frame.x, left, delta=0.011, msg=str(path))

    def test_flamechart_keeps_time_order_and_separates_non_adjacent_repeats(self):
        folded = "main;a 1\nmain;b 1\nmain;a 1\nmain;a;x 1\n"
        _, chart = parse(render(folded, "--flamechart")[0])
        _, merged = parse(render(folded)[0])
        depth2 = [f.name for f in sorted(chart, key=lambda f: f.x) if f.depth == 2]
        self.assertEqual(depth2, ["a", "b", "a"])
        self.assertEqual([f.name for f in sorted(merged, key=lambda f: f.x) if f.depth == 2],
                         ["a", "b"])
        x_frames = [f for f in chart if f.name == "x"]
        last_a = max((f for f in chart if f.name == "a"), key=lambda f: f.x)
        self.assertEqual(x_frames[0].x, last_a.x)  # the merged adjacent repeat holds the child

    def test_inverted_puts_the_root_on_top_and_children_below(self):
        folded = "main;parse;lex 3\nmain;eval 1\n"
        _, normal = parse(render(folded)[0])
        _, icicle = parse(render(folded, "--inverted")[0])
        for frames, step in ((normal, -FRAME_HEIGHT), (icicle, FRAME_HEIGHT)):
            y = {f.name: f.y for f in frames}
            self.assertEqual(y["main"] - y["all"], step)
            self.assertEqual(y["lex"] - y["parse"], step)
        # Same horizontal layout either way.
        self.assertEqual({f.path: (f.x, f.width) for f in normal},
                         {f.path: (f.x, f.width) for f in icicle})

    def test_reverse_puts_leaves_at_the_root(self):
        folded = "main;parse;lex 5\nmain;eval;lex 3\nmain;eval 2\n"
        _, frames = parse(render(folded, "--reverse")[0])
        paths = {f.path: f.width for f in frames}
        totals = merged_totals(folded, reverse=True)
        self.assertEqual(set(paths), set(totals))
        self.assertAlmostEqual(paths[("lex",)], 8 / 10 * FRAME_WIDTH, delta=0.006)
        self.assertIn(("lex", "parse", "main"), paths)


class Colours(unittest.TestCase):
    def test_deterministic_colours_are_identical_across_runs_and_inputs(self):
        first, _ = render("main;shared 3\nmain;other 2\n", "--deterministic", name="one.folded")
        second, _ = render("main;shared 3\nmain;other 2\n", "--deterministic", name="one.folded")
        self.assertEqual(first, second)
        third, _ = render("x;y;shared 9\nz 1\n", "--deterministic", name="two.folded")
        fill = lambda svg, name: next(f.fill for f in parse(svg)[1] if f.name == name)
        self.assertEqual(fill(first, "shared"), fill(third, "shared"))

    def test_differential_colours(self):
        before = "main;same 10\nmain;slower 10\nmain;faster 20\nmain;gone 5\n"
        after = "main;same 10\nmain;slower 20\nmain;faster 10\nmain;new 5\n"
        root, frames = parse(render_diff(before, after))
        fills = {f.name: rgb(f.fill) for f in frames}
        self.assertEqual(fills["same"], (255, 255, 255))
        r, g, b = fills["slower"]
        self.assertTrue(r == 255 and g == b and g < 255, fills["slower"])
        r, g, b = fills["faster"]
        self.assertTrue(b == 255 and r == g and r < 255, fills["faster"])
        self.assertLess(fills["new"][1], fills["slower"][1])  # new is redder than +100%
        self.assertNotIn("gone", fills)
        notes = root.find(f".//{SVG}text[@id='notes']").text
        self.assertIn("only in before, not drawn: 1 frame, 5 samples", notes)


class Errors(unittest.TestCase):
    def test_bad_input_exits_2_naming_file_and_line(self):
        _, stderr = render("a 1\nb two\n", name="bad.folded", expect_status=2)
        self.assertIn("bad.folded:2: missing count", stderr)

    def test_bad_option_exits_2(self):
        _, stderr = render("a 1\n", "--palette", "pink", expect_status=2)
        self.assertIn("unknown palette 'pink'", stderr)


if __name__ == "__main__":
    TOOL = sys.argv.pop(1)
    with tempfile.TemporaryDirectory(prefix="vor-flamegraph-") as WORK:
        unittest.main(verbosity=2)
