#!/usr/bin/env python3
"""test_gpu.py: the GPU rows end to end, without a GPU.

    test_gpu.py SCENARIO --vor VOR --workload GPU_WORKLOAD --fakes DIR --tmp DIR

Each scenario writes a script for the fake NVML (fake_nvml.c), runs gpu_workload with the
fake's folder first on LD_LIBRARY_PATH (so libvor's own dlopen of libnvidia-ml.so.1 loads
it) and VOR_RECORD set, then reads the capture back through `vor export --format csv` and
`vor summary --json` and checks the columns, every value, what vor said on stderr and what
the fake saw (its log: nvmlInit / nvmlShutdown balance, calls made while NVML was not
initialised, calls per reading). Values are compared exactly: the fake's raw integers
times the column's scale, as the reader computes them. `real_nvml` runs against the real
driver and exits 77 (skipped) where there is none.
"""
import argparse
import csv
import ctypes
import io
import json
import os
import shutil
import subprocess
import sys

SKIP = 77

# The Linux system columns, then the GPU readings: (name suffix, single-GPU name, unit,
# scale, the fake's raw readings that make the value).
LINUX = [("frame_ms", "ms"), ("memory_mb", "MB"), ("io_ms", "ms"), ("io_MB", "MB"), ("cpu_ms", "ms")]
READINGS = [
    ("util", "gpu_util", "%", 1.0, ["util"]),
    ("mem", "gpu_mem", "MB", 1e-6, ["mem"]),
    ("power", "gpu_power", "W", 1e-3, ["power"]),
    ("pcie", "pcie", "MB/s", 1.024e-3, ["pcie_tx", "pcie_rx"]),
    ("temp", "gpu_temp", "C", 1.0, ["temp"]),
    ("clock", "gpu_clock", "MHz", 1.0, ["clock"]),
]
# Scripted raw values of device d: distinct per device and reading.
def raw_values(d):
    return {"util": 37 + d, "mem": 1234567890 + d * 1000003, "power": 123456 + d * 1111, "pcie_tx": 1000 + d,
            "pcie_rx": 2500 + 7 * d, "temp": 61 + d, "clock": 1410 + 15 * d}


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Env:
    def __init__(self, args, name):
        self.vor, self.workload, self.fakes = args.vor, args.workload, args.fakes
        self.dir = os.path.join(args.tmp, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.runs = 0

    def script(self, lines, devices=1, values=True):
        """A fake script: `devices`, every reading of every device, the log, then `lines`."""
        self.runs += 1
        path = os.path.join(self.dir, f"script{self.runs}")
        self.log = os.path.join(self.dir, f"fake{self.runs}.log")
        out = [f"devices {devices}", f"log {self.log}"]
        if values:
            for d in range(devices):
                out += [f"value {d} {m} {v}" for m, v in raw_values(d).items()]
        with open(path, "w") as f:
            f.write("\n".join(out + lines) + "\n")
        return path

    def run(self, steps, script=None, variant="full", env=None, lib_dir=None):
        """Runs gpu_workload; returns (capture path, vor's stderr lines)."""
        capture = os.path.join(self.dir, f"run{self.runs}.vor")
        e = dict(os.environ)
        for k in ("VOR_GPU", "VOR_GPU_POLL_HZ", "VOR_RECORD_FLAME", "VOR_TRACE"):
            e.pop(k, None)
        e["LD_LIBRARY_PATH"] = lib_dir if lib_dir is not None else os.path.join(self.fakes, f"fake_nvml_{variant}")
        e["VOR_RECORD"] = capture
        if script:
            e["FAKE_NVML_SCRIPT"] = script
        e.update(env or {})
        p = subprocess.run([self.workload] + steps.split(), env=e, capture_output=True, text=True, timeout=100)
        if p.returncode != 0:
            raise Fail(f"gpu_workload {steps} exited {p.returncode}: {p.stderr}")
        lines = [l for l in p.stderr.splitlines() if l.startswith("vor: ")]
        others = [l for l in p.stderr.splitlines() if not l.startswith("vor: ")]
        check(not others, f"unexpected output on stderr: {others}")
        return capture, lines

    def fake_log(self):
        if not os.path.exists(self.log):
            return None
        out = {"calls": {}}
        with open(self.log) as f:
            for line in f:
                w = line.split()
                if w[0] == "calls":
                    out["calls"][(int(w[1]), w[2])] = int(w[3])
                else:
                    out[w[0]] = int(w[1])
        return out

    def read(self, capture):
        """(system column list [(name, unit)], rows [{name: value or None}], summary json)."""
        p = subprocess.run([self.vor, "export", capture, "--format", "csv"], capture_output=True, text=True)
        check(p.returncode == 0, f"vor export: {p.stderr}")
        rows = list(csv.reader(io.StringIO(p.stdout)))
        header = rows[0][3:]
        names = [h.rsplit(" (", 1)[0] if h.endswith(")") else h for h in header]
        frames = [{n: (float(v) if v != "" else None) for n, v in zip(names, r[3:])} for r in rows[1:]]
        s = subprocess.run([self.vor, "summary", capture, "--json"], capture_output=True, text=True)
        check(s.returncode == 0, f"vor summary: {s.stderr}")
        summary = json.loads(s.stdout)
        system = [(m["name"], m["unit"]) for m in summary["metrics"] if m["system"]]
        return system, frames, summary


def gpu_columns(devices, readings=READINGS, indexes=None):
    """[(name, unit, scale, device, raws)] as vor names them."""
    out = []
    for d in indexes if indexes is not None else range(devices):
        for suffix, single, unit, scale, raws in readings:
            out.append((single if devices == 1 else f"gpu{d}_{suffix}", unit, scale, d, raws))
    return out


def expected(col):
    name, unit, scale, d, raws = col
    return sum(raw_values(d)[r] for r in raws) * scale


def check_columns(system, cols):
    want = LINUX + [(c[0], c[1]) for c in cols]
    check(system == want, f"system columns {system}, expected {want}")


def check_values(frames, cols, which=None, present=True):
    """Every frame in `which` (default all) has each column's exact value (or none)."""
    for i, f in enumerate(frames if which is None else [frames[k] for k in which]):
        for c in cols:
            v = f.get(c[0])
            if present:
                check(v == expected(c), f"frame {i}: {c[0]} = {v}, expected {expected(c)}")
            else:
                check(v is None, f"frame {i}: {c[0]} = {v}, expected no value")


def check_summary(summary, cols, frames):
    by_name = {m["name"]: m for m in summary["metrics"]}
    for c in cols:
        m = by_name[c[0]]
        check(m["frames"] == frames, f"summary: {c[0]} in {m['frames']} frames, expected {frames}")
        for k in ("min", "p95", "max"):
            check(m[k] == expected(c), f"summary: {c[0]} {k} {m[k]}, expected {expected(c)}")
        check(abs(m["mean"] - expected(c)) <= 1e-12 * abs(expected(c)), f"summary: {c[0]} mean {m['mean']}")


def check_lines(lines, wanted):
    """vor's stderr lines are exactly one per entry of `wanted` (substrings), in order."""
    check(len(lines) == len(wanted), f"vor said {lines}, expected {len(wanted)} line(s) with {wanted}")
    for line, parts in zip(lines, wanted):
        for part in parts:
            check(part in line, f"'{part}' not in: {line}")


def check_clean(env, inits=1):
    log = env.fake_log()
    check(log is not None, "the fake NVML was not loaded")
    check(log["init"] == inits and log["shutdown"] == inits,
          f"nvmlInit {log['init']} times, nvmlShutdown {log['shutdown']} times, expected {inits} each")
    check(log["uninitialised"] == 0, f"{log['uninitialised']} NVML calls while it was not initialised")
    return log


def run_one_gpu(env, steps, n_frames, env_vars=None):
    """Runs `steps` with one scripted GPU; checks the columns and that each of the `n_frames`
    frames carries every exact value; returns vor's stderr lines."""
    cap, lines = env.run(steps, env.script([]), env=env_vars)
    system, frames, _ = env.read(cap)
    cols = gpu_columns(1)
    check_columns(system, cols)
    check(len(frames) == n_frames, f"{len(frames)} frames, expected {n_frames}")
    check_values(frames, cols)
    return lines


# ---- Scenarios -----------------------------------------------------------------------

def one_gpu(env):
    """One GPU: six columns named without an index, after Linux's and before a user metric
    named before vor_enable; every frame carries the exact values; clean shutdown."""
    cap, lines = env.run("metric loss 2.5 enable frames 10 wait 0 util 3 frames 10 shutdown", env.script([]))
    system, frames, summary = env.read(cap)
    cols = gpu_columns(1)
    check_columns(system, cols)
    check([m["name"] for m in summary["metrics"]][-1] == "loss", "the user metric follows the GPU columns")
    check(len(frames) == 20 and summary["finished"], f"{len(frames)} frames")
    check_values(frames, cols)
    check_summary(summary, cols, 20)
    check_lines(lines, [])
    check(check_clean(env)["calls"][(0, "util")] >= 3, "the poller read the GPU")


def two_gpus(env):
    """Two GPUs: gpu0_* and gpu1_*; device 0's utilisation moves (10, 11, 12, ...): each frame
    holds one of the poller's rounds, never an older one than the frame before."""
    script = env.script(["value 0 util 10 1"], devices=2)
    cap, lines = env.run("enable frames 5 wait 0 util 4 frames 5 wait 0 util 7 frames 5 shutdown", script)
    system, frames, summary = env.read(cap)
    cols = gpu_columns(2)
    check_columns(system, cols)
    check_values(frames, [c for c in cols if c[0] != "gpu0_util"])
    util = [f["gpu0_util"] for f in frames]
    check(all(u is not None and u == int(u) and u >= 10 for u in util), f"gpu0_util {util}")
    check(util == sorted(util), f"gpu0_util goes back in time: {util}")
    check(min(util[10:]) >= 15, f"the last frames hold round 5 or later: {util}")
    check_lines(lines, [])
    check_clean(env)


def absent(env):
    """No NVIDIA driver: no GPU column at all (not zeros), and nothing said."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        print("a real libnvidia-ml.so.1 is on this machine: absence cannot be shown here")
        return SKIP
    except OSError:
        pass
    empty = os.path.join(env.dir, "empty")
    os.makedirs(empty)
    cap, lines = env.run("enable frames 5 shutdown", lib_dir=empty)
    system, frames, _ = env.read(cap)
    check_columns(system, [])
    check(len(frames) == 5 and all("gpu_util" not in f for f in frames), "no GPU values")
    check_lines(lines, [])


def off(env):
    """VOR_GPU=0: NVML is not even loaded. A bad VOR_GPU is reported and ignored (on)."""
    cap, lines = env.run("enable frames 3 shutdown", env.script([]), env={"VOR_GPU": "0"})
    system, _, _ = env.read(cap)
    check_columns(system, [])
    check_lines(lines, [])
    check(env.fake_log() is None, "VOR_GPU=0 loaded the library")
    cap, lines = env.run("enable frames 3 shutdown", env.script([]), env={"VOR_GPU": "yes"})
    system, frames, _ = env.read(cap)
    check_columns(system, gpu_columns(1))
    check_values(frames, gpu_columns(1))
    check_lines(lines, [["[BAD_ENVIRONMENT]", 'VOR_GPU="yes" must be 0 or 1; ignored']])


def missing_entry(env):
    """A driver library without an entry point every reading needs: no GPU column, one info line."""
    cap, lines = env.run("enable frames 3 shutdown", env.script([]), variant="no_handle")
    system, _, _ = env.read(cap)
    check_columns(system, [])
    check_lines(lines, [["info [GPU_UNAVAILABLE]", "libnvidia-ml.so.1 has no nvmlDeviceGetHandleByIndex_v2"]])
    check(env.fake_log() is None, "nvmlInit called on an unusable library")  # the fake's log starts with nvmlInit


def missing_readings(env):
    """A driver without the power and PCIe entry points: those columns are left out, quietly."""
    cap, lines = env.run("enable frames 5 shutdown", env.script([]), variant="no_power_pcie")
    system, frames, summary = env.read(cap)
    cols = gpu_columns(1, [r for r in READINGS if r[0] not in ("power", "pcie")])
    check_columns(system, cols)
    check_values(frames, cols)
    check_summary(summary, cols, 5)
    check_lines(lines, [])
    check_clean(env)


def init_error(env):
    """nvmlInit fails (the driver is not loaded): no GPU column, one info line with NVML's words."""
    cap, lines = env.run("enable frames 3 shutdown", env.script(["init_error 9"]))
    check_columns(env.read(cap)[0], [])
    check_lines(lines, [["info [GPU_UNAVAILABLE]", "nvmlInit failed: Driver Not Loaded (NVML error 9)"]])


def no_device(env):
    """NVML without a GPU, or failing to count them: no GPU column, one info line; NVML shut down."""
    cap, lines = env.run("enable frames 3 shutdown", env.script([], devices=0))
    check_columns(env.read(cap)[0], [])
    check_lines(lines, [["info [GPU_UNAVAILABLE]", "NVML sees no GPU"]])
    check_clean(env)
    cap, lines = env.run("enable frames 3 shutdown", env.script(["count_error 999"]))
    check_columns(env.read(cap)[0], [])
    check_lines(lines, [["[GPU_UNAVAILABLE]", "nvmlDeviceGetCount failed: Unknown Error (NVML error 999)"]])
    check_clean(env)


def read_errors(env):
    """A reading the GPU does not support has no column; one that starts failing (from its
    third call) is absent from the frames after, and reported once."""
    script = env.script(["error 0 power 3", "error 0 temp 999 2"])
    cap, lines = env.run("enable frames 3 wait 0 util 4 frames 5 shutdown", script, env={"VOR_GPU_POLL_HZ": "2"})
    system, frames, summary = env.read(cap)
    cols = gpu_columns(1, [r for r in READINGS if r[0] != "power"])
    check_columns(system, cols)
    temp = [c for c in cols if c[0] == "gpu_temp"]
    others = [c for c in cols if c[0] != "gpu_temp"]
    check_values(frames, others)
    check_values(frames, temp, which=range(3))
    check_values(frames, temp, which=range(3, 8), present=False)
    check_summary(summary, temp, 3)
    check_lines(lines, [["warning [GPU_READ_FAILED]", "gpu_temp: Unknown Error (NVML error 999)"]])
    check_clean(env)


def lost(env):
    """GPU 1 falls off the bus at its fourth reading: its columns are absent from then on, it
    is never asked again, GPU 0 goes on; one warning."""
    script = env.script(["lost 1 3"], devices=2)
    cap, lines = env.run("enable frames 3 wait 1 util 4 wait 0 util 5 frames 5 shutdown", script,
                         env={"VOR_GPU_POLL_HZ": "2"})
    system, frames, _ = env.read(cap)
    cols = gpu_columns(2)
    check_columns(system, cols)
    gpu0, gpu1 = [c for c in cols if c[3] == 0], [c for c in cols if c[3] == 1]
    check_values(frames, gpu0)
    check_values(frames, gpu1, which=range(3))
    check_values(frames, gpu1, which=range(3, 8), present=False)
    check_lines(lines, [["warning [GPU_READ_FAILED]", "GPU 1: GPU is lost; its columns are absent from now on"]])
    log = check_clean(env)
    check(log["calls"][(1, "util")] == 4 and log["calls"][(1, "clock")] == 3,
          f"GPU 1 was asked again after it was lost: {log['calls']}")


def slow(env):
    """Every NVML call takes 150 ms (a round over a second): frames go on meanwhile, values
    are exact whenever present, and shutdown waits for the call in progress only."""
    cap, lines = env.run("enable frames 20 wait 0 util 2 frames 20 shutdown", env.script(["sleep_us 150000"]))
    system, frames, _ = env.read(cap)
    cols = gpu_columns(1)
    check_columns(system, cols)
    for i, f in enumerate(frames):
        for c in cols:
            check(f[c[0]] in (None, expected(c)), f"frame {i}: {c[0]} = {f[c[0]]}")
    check(all(frames[0][c[0]] == expected(c) for c in cols), "the probe's reading is in the first frame")
    check_lines(lines, [])
    check_clean(env)


def hang(env):
    """An NVML call never returns: frames go on, vor_shutdown gives up on the poller after a
    second (the capture ends properly), and GPU values stay off for the process: a second
    session declares the columns and leaves them empty, and says why once."""
    steps = "enable frames 3 wait_hang frames 5 shutdown release enable frames 3 shutdown"
    cap, lines = env.run(steps, env.script(["hang 0 clock 2"]))
    system, frames, summary = env.read(cap)
    cols = gpu_columns(1)
    check_columns(system, cols)
    check(len(frames) == 3 and summary["finished"], "the second session's capture, finished")
    check_values(frames, cols, present=False)
    check_lines(lines, [["warning [GPU_READ_FAILED]", "did not return within 1 s; the GPU poller was left in it"],
                        ["info [GPU_UNAVAILABLE]", "did not return within 1 s in an earlier session"]])
    log = env.fake_log()
    check(log["uninitialised"] == 0 and log["shutdown"] == 0, f"NVML shut down under its poller: {log}")


def fork(env):
    """A child forked from a recording process starts its own session: it makes no NVML call
    (the workload checks) and says so once; the parent's poller goes on."""
    lines = run_one_gpu(env, "enable frames 3 fork frames 3 wait 0 util 4 frames 3 shutdown", 9)
    gpu_lines = [l for l in lines if "GPU" in l]
    check_lines(gpu_lines, [["info [GPU_UNAVAILABLE]", "not read in a process forked from the one that loaded NVML"]])
    check_clean(env)


def sessions(env):
    """Two sessions in one process: NVML is shut down after each and initialised again for the
    next, whose frames carry the values again."""
    lines = run_one_gpu(env, "enable frames 3 shutdown enable frames 3 wait 0 util 4 frames 3 shutdown", 6)
    check_lines(lines, [])
    check_clean(env, inits=2)


def poll_hz(env):
    """VOR_GPU_POLL_HZ: a bad value is reported, naming it, and the default is used."""
    steps = "enable frames 3 wait 0 util 3 frames 3 shutdown"
    for value in ("0", "abc", "5000", "-3", "2.5"):
        lines = run_one_gpu(env, steps, 6, {"VOR_GPU_POLL_HZ": value})
        check_lines(lines, [["[BAD_ENVIRONMENT]", f'VOR_GPU_POLL_HZ="{value}" is not a whole number from 1 to 1000; '
                                                  "ignored (10)"]])
        check_clean(env)
    check_lines(run_one_gpu(env, steps, 6, {"VOR_GPU_POLL_HZ": "1000"}), [])


def too_many(env):
    """Six GPUs: the first four fill the format's 32 system columns (5 + 24), the others are
    left out with one info line; a user metric still follows."""
    cap, lines = env.run("metric loss 1 enable frames 4 shutdown", env.script([], devices=6))
    system, frames, summary = env.read(cap)
    cols = gpu_columns(6, indexes=range(4))
    check_columns(system, cols)
    check(len(system) == 29, f"{len(system)} system columns")
    check_values(frames, cols)
    check(frames[0]["loss"] == 1.0, "the user metric")
    check_lines(lines, [["info [GPU_LEFT_OUT]",
                         "GPUs 4 to 5: left out, vor takes at most four GPUs (a capture holds 32 system columns)"]])
    check_clean(env)


def real_nvml(env):
    """With a real NVIDIA driver: the columns exist and the readings are sane."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        count = ctypes.c_uint(0)
        if nvml.nvmlInit_v2() != 0 or nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0 or count.value == 0:
            print("NVML is here but has no usable GPU: skipped")
            return SKIP
    except (OSError, AttributeError):
        print("no NVIDIA driver (libnvidia-ml.so.1) on this machine: skipped")
        return SKIP
    cap, lines = env.run("enable frames 5 sleep 1500 frames 5 shutdown", lib_dir=os.environ.get("LD_LIBRARY_PATH", ""))
    system, frames, summary = env.read(cap)
    names = {n: u for n, u in system}
    one = count.value == 1
    limits = {"util": (0, 100), "mem": (0, 1e7), "power": (0, 3000), "pcie": (0, 1e6), "temp": (0, 130),
              "clock": (0, 1e4)}
    seen = 0
    for suffix, single, unit, _, _ in READINGS:
        name = single if one else f"gpu0_{suffix}"
        if name not in names:
            print(f"{name}: not supported by this GPU")
            continue
        check(names[name] == unit, f"{name} unit {names[name]}")
        values = [f[name] for f in frames if f.get(name) is not None]
        check(len(values) >= 5, f"{name}: values in {len(values)} of {len(frames)} frames")
        lo, hi = limits[suffix]
        check(all(lo <= v <= hi for v in values), f"{name}: {values} outside {lo}..{hi}")
        seen += 1
    check(seen >= 3, "at least utilisation, memory and temperature")
    check(not [l for l in lines if "GPU" in l], f"vor said {lines}")


SCENARIOS = {f.__name__: f for f in (one_gpu, two_gpus, absent, off, missing_entry, missing_readings, init_error,
                                     no_device, read_errors, lost, slow, hang, fork, sessions, poll_hz, too_many,
                                     real_nvml)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--vor", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--fakes", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    env = Env(a, a.scenario)
    try:
        status = SCENARIOS[a.scenario](env)
    except Fail as e:
        print(f"FAIL {a.scenario}: {e}")
        return 1
    if status == SKIP:
        return SKIP
    print(f"ok {a.scenario}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
