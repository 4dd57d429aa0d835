#!/usr/bin/env python3
"""test_cli_symbolize.py: `vor symbolize` (issue 10.1). A stripped program records its
functions as module+offset; the unstripped file of the same build names them; a file of
another build, another program, a non-ELF file and a format 1.0 capture are refused with
one message and no output; a damaged record stays damaged, the rest is named.

    test_cli_symbolize.py --vor VOR --dump DUMP --stripped PROG.stripped --unstripped PROG
                          --variant OTHER_BUILD --tmp DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Failure, check, equal  # noqa: E402
from craft_capture import CaptureWriter  # noqa: E402
from reading_rules import Dump  # noqa: E402

ARGS = None


def vor(*args):
    p = subprocess.run([ARGS.vor, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def tmp(name):
    return os.path.join(ARGS.tmp, name)


def folded(path):
    rc, out, err = vor("export", path, "--format", "folded")
    equal(rc, 0, f"folded of {path} ({err!r})")
    return {line.rpartition(" ")[0]: int(line.rpartition(" ")[2]) for line in out.splitlines()}


def refused(args, needle, what):
    out = tmp("refused.vor")
    if os.path.exists(out):
        os.remove(out)
    rc, _, err = vor("symbolize", *args, "-o", out)
    equal(rc, 2, f"{what}: exit status ({err!r})")
    check(needle in err and err.count("\n") == 1, f"{what}: one message saying {needle!r}: {err!r}")
    check(not os.path.exists(out), f"{what}: nothing written")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for name in ("vor", "dump", "stripped", "unstripped", "variant", "tmp"):
        ap.add_argument("--" + name, required=True)
    ARGS = ap.parse_args()
    os.makedirs(ARGS.tmp, exist_ok=True)
    try:
        capture = tmp("stripped.vor")
        if os.path.exists(capture):
            os.remove(capture)
        env = {k: v for k, v in os.environ.items() if not k.startswith("VOR_")}
        env.update(VOR_RECORD=capture, VOR_RECORD_FLAME="1")
        p = subprocess.run([ARGS.stripped, "20"], env=env, capture_output=True, text=True, timeout=120)
        equal(p.returncode, 0, f"the stripped workload ({p.stderr!r})")
        if Dump(ARGS.dump, capture).info["version"] == "1.0":
            print("SKIP: this build writes format 1.0 (no modules to symbolize against)")
            return 77
        before = folded(capture)
        check(any("+0x" in k for k in before), f"a stripped program's functions are module+offset: {before}")

        named = tmp("named.vor")
        rc, out, err = vor("symbolize", capture, "--module", ARGS.unstripped, "-o", named)
        equal(rc, 0, f"symbolize ({err!r})")
        check("named 2 of 2 unnamed function sites" in err, f"what was named: {err!r}")
        after = folded(named)
        check(any(k.endswith(";outer_work;leaf_work") for k in after), f"functions named: {after}")
        equal(sum(after.values()), sum(before.values()), "the same times")
        a, b = Dump(ARGS.dump, capture), Dump(ARGS.dump, named)
        equal([(f["index"], f["start"], f["dur"], f["values"]) for f in b.frames],
              [(f["index"], f["start"], f["dur"], f["values"]) for f in a.frames], "frames and values unchanged")
        equal([[(s["depth"], s["start"], s["dur"], s["parent"]) for s in f["scopes"]] for f in b.frames],
              [[(s["depth"], s["start"], s["dur"], s["parent"]) for s in f["scopes"]] for f in a.frames],
              "scopes unchanged")
        rc, out, err = vor("symbolize", named, "--module", ARGS.unstripped, "-o", tmp("again.vor"))
        check(rc == 0 and "named 0 of 0" in err, f"nothing left to name: {err!r}")

        # Another build of the same program, under the recorded file's name: refused.
        other = os.path.join(ARGS.tmp, "other")
        os.makedirs(other, exist_ok=True)
        same_name = os.path.join(other, os.path.basename(ARGS.stripped))
        shutil.copy(ARGS.variant, same_name)
        refused([capture, "--module", same_name], "not the build the capture ran", "another build")
        refused([capture, "--module", "/bin/sh"], "matches no module of the capture", "another program")
        refused([capture, "--module", os.path.abspath(__file__)], "not an ELF file", "not ELF")
        w = CaptureWriter()
        w.frame(duration=1000)
        w.end()
        refused([w.save(tmp("old.vor")), "--module", ARGS.unstripped], "format 1.0 capture records no modules",
                "a 1.0 capture")

        # A damaged record stays damaged; the others are named.
        with open(capture, "rb") as fh:
            data = bytearray(fh.read())
        body = int.from_bytes(data[12:16], "little")
        pos = 24 + body
        for _ in range(5):  # the sixth record
            pos += 10 + (int.from_bytes(data[pos:pos + 4], "little") & 0x7FFFFFFF)
        data[pos + 12] ^= 0x21
        damaged = tmp("damaged.vor")
        with open(damaged, "wb") as fh:
            fh.write(data)
        rc, out, err = vor("symbolize", damaged, "--module", ARGS.unstripped, "-o", named)
        equal(rc, 0, f"symbolize of a damaged capture ({err!r})")
        d_in, d_out = Dump(ARGS.dump, damaged), Dump(ARGS.dump, named)
        equal(len(d_out.frames), len(d_in.frames), "the same frames read")
        s_in = json.loads(vor("summary", damaged, "--json")[1])["damaged_records"]
        s_out = json.loads(vor("summary", named, "--json")[1])["damaged_records"]
        equal((s_in["count"], s_out["count"]), (1, 1), "one damaged record, in and out")
        hit = s_in["records"][0]
        with open(named, "rb") as fh:
            out_data = fh.read()
        at = s_out["records"][0]["offset"]
        equal(out_data[at:at + hit["length"]], bytes(data[hit["offset"]:hit["offset"] + hit["length"]]),
              "the damaged record copied as it was (earlier records, renamed, moved it)")
        check(any(k.endswith(";outer_work;leaf_work") for k in folded(named)), "named around the damage")
    except Failure as e:
        print(f"FAIL cli_symbolize: {e}")
        return 1
    print("ok cli_symbolize")
    return 0


if __name__ == "__main__":
    sys.exit(main())
