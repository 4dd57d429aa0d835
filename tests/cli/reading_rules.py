"""reading_rules.py: the reading rules of docs/FORMAT.md computed independently of the `vor`
command, from capture_dump --tsv's listing of a capture (the reader's output as text), for
the CLI tests to compare against.

Per flame frame and thread: a scope's contribution is its time inside the frame; its parent
is the reader's parent index (-1 none, -2 not recorded: under "[parent not recorded]");
self = contribution minus the children's contributions (at least 0), less each direct
child's calibrated cost when compensating (at least 0); total = self + the children's
totals. Per name: calls, mean and max from the scopes that ended; total counts a scope
nested in one of the same name once. Written plainly (recursion, dicts), not as the CLI's
single-pass walk. Only the standard library is used.
"""
import math
import subprocess

PLACEHOLDER = "[parent not recorded]"
INT64_MAX = (1 << 63) - 1


class Dump:
    """Everything capture_dump --tsv prints about a capture."""

    def __init__(self, dump_tool, path):
        p = subprocess.run([dump_tool, "--tsv", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"capture_dump failed: {p.stderr!r}")
        out = p.stdout.decode("utf-8", "surrogateescape")
        self.info = None
        self.scope_cost = self.function_cost = 0.0
        self.frames = []
        self.columns = {}
        self.thread_names = {}
        self.end = None
        for line in out.split("\n"):
            if not line:
                continue
            f = line.split("\t")
            kind = f[0]
            if kind == "info":
                self.info = dict(version=f[1], producer=f[2], process=f[3], pid=int(f[4]), wall=int(f[5]),
                                 flame=int(f[6]))
            elif kind == "costs":
                self.scope_cost, self.function_cost = float(f[1]), float(f[2])
            elif kind == "frame":
                self.frames.append(dict(index=int(f[1]), start=int(f[2]), dur=int(f[3]), overhead=int(f[4]),
                                        dropped=int(f[5]), has_flame=int(f[6]), n_scopes=int(f[7]), values={},
                                        drops=[], threads={}, scopes=[]))
            elif kind == "value":
                self.frames[-1]["values"][int(f[1])] = float(f[2])
            elif kind == "drop":
                self.frames[-1]["drops"].append((int(f[1]), int(f[2]), int(f[3])))
            elif kind == "scope":
                s = dict(thread=int(f[1]), tname=f[2], name=f[3], depth=int(f[4]), start=int(f[5]), dur=int(f[6]),
                         index=int(f[7]), parent=int(f[8]), flags=int(f[9]), open=int(f[10]), function=int(f[11]))
                self.frames[-1]["threads"].setdefault(s["thread"], []).append(s)
                self.frames[-1]["scopes"].append(s)
            elif kind == "column":
                self.columns[int(f[1])] = dict(system=int(f[2]), name=f[3], unit=f[4] if len(f) > 4 else "")
            elif kind == "thread":
                self.thread_names[int(f[1])] = f[2] if len(f) > 2 else ""
            elif kind == "end":
                self.end = dict(frames=int(f[1]), status=f[2], message=f[3] if len(f) > 3 else "")

    def thread_name(self, tid):
        name = self.thread_names.get(tid, "")
        return name if name else f"thread {tid}"

    def ended_scopes(self):
        for fr in self.frames:
            for s in fr["scopes"]:
                if not s["open"]:
                    yield s

    scopes = ended_scopes


def plausible(stack, true_stacks, placeholder=PLACEHOLDER):
    """Whether a folded stack is one the program makes: one of true_stacks, or, after the
    thread's frame, the placeholder followed by the end of one (its start not recorded)."""
    if stack in true_stacks:
        return True
    parts = stack.split(";")
    if len(parts) < 3 or parts[1] != placeholder:
        return False
    thread, tail = parts[0], parts[2:]
    for t in true_stacks:
        tp = t.split(";")
        if tp[0] == thread and len(tp) > len(tail) + 1 and tp[len(tp) - len(tail):] == tail:
            return True
    return False


def frame_thread(frame, scopes, costs):
    """The rules on one thread of one frame. Returns a list, per scope, of dicts: contrib,
    self, total, path (names from the outermost, PLACEHOLDER first when the chain starts with
    an unrecorded parent), outermost (no ancestor of the same name)."""
    fs, fe = frame["start"], frame["start"] + frame["dur"]
    n = len(scopes)
    contrib = []
    for s in scopes:
        end = fe if s["open"] else s["start"] + s["dur"]
        lo, hi = max(s["start"], fs), min(end, fe)
        contrib.append(max(0, hi - lo))
    children = [[] for _ in range(n)]
    for i, s in enumerate(scopes):
        if s["parent"] >= 0:
            children[s["parent"]].append(i)
    memo = {}

    def figures(i):
        if i in memo:
            return memo[i]
        child_contrib = sum(contrib[c] for c in children[i])
        self_ns = max(0, contrib[i] - child_contrib)
        cost = sum(costs(scopes[c]) for c in children[i])
        if cost > 0:
            self_ns = 0 if self_ns <= cost else max(0, self_ns - math.floor(cost + 0.5))
        total = self_ns + sum(figures(c)[1] for c in children[i])
        memo[i] = (self_ns, total)
        return memo[i]

    out = []
    for i in range(n):
        chain = []
        j = i
        while j >= 0:
            chain.append(j)
            j = scopes[j]["parent"]
        names = [scopes[k]["name"] for k in reversed(chain)]
        if j == -2:
            names = [PLACEHOLDER] + names
        self_ns, total = figures(i)
        out.append(dict(contrib=contrib[i], self=self_ns, total=total, path=names,
                        outermost=scopes[i]["name"] not in [scopes[k]["name"] for k in chain[1:]]))
    return out


class Rules:
    """Folded stacks, per-name figures and per-frame totals of a whole dump."""

    def __init__(self, dump, compensate=True, thread_roots=True, frames=None):
        self.compensating = compensate and (dump.scope_cost > 0 or dump.function_cost > 0)

        def costs(s):
            if not self.compensating:
                return 0.0
            return dump.function_cost if s["function"] else dump.scope_cost

        self.folded = {}
        self.names = {}
        self.per_frame = []
        self.flame_frames = 0
        self.parent_unknown = 0
        for fr in dump.frames:
            if not fr["has_flame"] or (frames is not None and not frames(fr)):
                continue
            self.flame_frames += 1
            this_frame = {}
            for tid, scopes in fr["threads"].items():
                for s, r in zip(scopes, frame_thread(fr, scopes, costs)):
                    if s["parent"] == -2:
                        self.parent_unknown += 1
                    path = ([dump.thread_name(tid)] if thread_roots else []) + r["path"]
                    key = ";".join(path)
                    self.folded[key] = self.folded.get(key, 0) + r["self"]
                    e = self.names.setdefault(s["name"], dict(calls=0, total=0, self=0, duration=0, max=0))
                    e["self"] += r["self"]
                    if r["outermost"]:
                        e["total"] += r["total"]
                        this_frame[s["name"]] = this_frame.get(s["name"], 0) + r["total"]
                    if not s["open"]:
                        full = s["dur"]
                        if self.compensating and r["contrib"] > r["total"]:
                            full -= r["contrib"] - r["total"]
                        full = max(0, full)
                        e["calls"] += 1
                        e["duration"] += full
                        e["max"] = max(e["max"], full)
            self.per_frame.append(this_frame)
        for e in self.names.values():
            for k in ("total", "self", "duration"):
                e[k] = min(e[k], INT64_MAX)
        # Stacks with time of their own; placeholder frames themselves have none.
        self.folded = {k: min(v, INT64_MAX) for k, v in self.folded.items() if v > 0}

    def mean(self, name):
        e = self.names[name]
        return e["duration"] / e["calls"] if e["calls"] else None


def nearest_rank(values, p):
    v = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(v)))
    return v[rank - 1]
