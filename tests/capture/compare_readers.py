#!/usr/bin/env python3
"""compare_readers.py: the reference reader (capture_dump) and the independent reader written
from docs/FORMAT.md (independent_reader.py) must print the same thing for:
  - a 1.1 capture the example writes (flame frames on every second frame);
  - copies of it with damage: a body byte, a size byte, a size forged to point past the end
    with a valid size check, two damaged records in a row, a torn tail;
  - the 1.0 capture in data/, which must also read exactly as the 1.0 reader read it;
  - a capture with open scopes, unwound scopes, drops by cause, modules and ids never
    declared, written by the real writer from frame records built by test_capture_format;
  - records built byte by byte that break the rules of FORMAT.md section 5;
  - a stream that starts in the middle of a capture with a state record (section 4.8).
Damage must cost the damaged records only, reported at their offsets.

Usage: compare_readers.py EXAMPLE CAPTURE_DUMP TEST_CAPTURE_FORMAT TEST_CAPTURE_INDEX
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from independent_reader import crc32c  # noqa: E402

example, dump, crafter, indexer = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def lines(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if out.returncode != 0:
        raise SystemExit("%s failed: %s" % (cmd, out.stderr.decode()))
    return [json.loads(line) for line in out.stdout.decode().splitlines()]


def both(path, full=True):
    a = lines([dump, "--full", path] if full else [dump, path])
    b = lines(["/usr/bin/python3", os.path.join(HERE, "independent_reader.py")] + (["--full"] if full else []) + [path])
    if a != b:
        if len(a) != len(b):
            raise SystemExit("%s: frame counts differ: %d vs %d" % (path, len(a), len(b)))
        i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        raise SystemExit("%s: line %d differs:\n%s\n%s" % (path, i, a[i], b[i]))
    return a


def records(data):
    body = struct.unpack_from("<I", data, 12)[0]
    at, out = 20 + body + 4, []
    while at + 10 <= len(data):
        n = struct.unpack_from("<I", data, at)[0] & 0x7FFFFFFF
        out.append(at)
        at += 10 + n
    return out


tmp = tempfile.mkdtemp()
run = os.path.join(tmp, "run.vor")
env = dict(os.environ, VOR_RECORD=run, VOR_RECORD_FLAME="1", VOR_RECORD_EVERY="2")
subprocess.run([example, "60"], env=env, stdout=subprocess.DEVNULL, check=True)
good = both(run)
assert len(good) == 61 and good[-1] == {"end": {"finished": True, "damage": []}}, good[-1]
frames = {f["index"]: f for f in good[:-1]}
data = open(run, "rb").read()
offsets = records(data)
assert len(offsets) == 61, len(offsets)  # 60 frames and the end record


def damaged(name, mutate, lost, damage):
    path = os.path.join(tmp, name + ".vor")
    b = bytearray(data)
    mutate(b)
    open(path, "wb").write(bytes(b))
    got = both(path)
    end = got[-1]["end"]
    read = {f["index"]: f for f in got[:-1]}
    assert sorted(set(frames) - set(read)) == lost, (name, sorted(set(frames) - set(read)))
    for i, f in read.items():
        assert f == frames[i], (name, i)
    assert [d[0] for d in end["damage"]] == damage, (name, end["damage"])
    return end


def flip(at):
    def m(b):
        b[at] ^= 0xFF
    return m


def forge_size(at, n):
    def m(b):
        size = struct.pack("<I", n)
        b[at:at + 4] = size
        b[at + 4:at + 6] = struct.pack("<H", crc32c(size) & 0xFFFF)
    return m


def several(*ms):
    def m(b):
        for f in ms:
            f(b)
    return m


damaged("first", flip(offsets[0] + 20), [0], [offsets[0]])  # its declarations are repeated in record 1
damaged("body", flip(offsets[5] + 14), [5], [offsets[5]])
damaged("size", flip(offsets[12] + 1), [12], [offsets[12]])
damaged("size-check", flip(offsets[13] + 5), [13], [offsets[13]])
end = damaged("past-the-end", forge_size(offsets[20], 10 * len(data)), [20], [offsets[20]])
assert end["damage"][0][1] == offsets[21] - offsets[20], end
damaged("two-in-a-row", several(flip(offsets[30] + 12), flip(offsets[31] + 12)), [30, 31], [offsets[30]])
end = damaged("end-record", flip(offsets[60] + 10), [], [offsets[60]])
assert end["finished"] is False and end["damage"][0][1] == len(data) - offsets[60], end
# A torn tail is not damage: the reader waits, with every complete frame read.
torn = os.path.join(tmp, "torn.vor")
open(torn, "wb").write(data[:offsets[40] + 25])
got = both(torn)
assert len(got) == 41 and got[-1] == {"end": {"finished": False, "damage": []}}, got[-1]

# Format 1.0: both readers agree, and read what the 1.0 reader read.
old = os.path.join(HERE, "data", "capture-1.0.vor")
both(old)
want = [json.loads(line) for line in open(os.path.join(HERE, "data", "capture-1.0.jsonl"))]
assert both(old, full=False) == want, "the 1.0 capture reads differently from the 1.0 reader"
# Open scopes, unwound scopes, drops, modules, undeclared ids (2^32 - 1).
crafted = os.path.join(tmp, "crafted.vor")
subprocess.run([crafter, "--write", crafted], stdout=subprocess.DEVNULL, check=True)
got = both(crafted)
both(crafted, full=False)
scopes = got[0]["scopes"]
assert [s[8] for s in scopes] == [0, 2, 0, 1, 1], scopes  # flags: unwound, open
assert [s[7] for s in scopes] == [2, 2, 3, -1, -1], scopes  # parents
assert scopes[4][:2] == ["thread 4294967295", "site 4294967295"], scopes[4]
assert got[0]["drops"] and got[0]["dropped"] == 5, got[0]

# A stream that starts in the middle (header, state record, records from frame 333 on:
# docs/FORMAT.md section 4.8) reads the same in both, "unchanged" values included.
resumed = os.path.join(tmp, "resumed.vor")
subprocess.run([indexer, "--write-resumed", resumed], stdout=subprocess.DEVNULL, check=True)
got = both(resumed)
assert got[0]["index"] == 333 and got[-1]["end"] == {"finished": True, "damage": []}, got[0]
assert got[0]["values"]["constant"] == 1.5, got[0]["values"]

# Records that break the rules of FORMAT.md section 5 cost those records only, in both.
rules = os.path.join(tmp, "rules.vor")
subprocess.run([crafter, "--write-rules", rules], stdout=subprocess.DEVNULL, check=True)
got = both(rules)
assert [f["index"] for f in got[:-1]] == [0, 1, 2, 3], got
assert len(got[-1]["end"]["damage"]) == 5 and got[-1]["end"]["finished"], got[-1]
assert "column " in "".join(got[-2]["values"]), got[-2]

print("readers agree on %d frames (%d scopes), 8 damaged copies, a torn tail, the 1.0 capture, a crafted one and one that breaks the rules"
      % (len(good) - 1, sum(len(f["scopes"]) for f in good[:-1])))
