#!/usr/bin/env python3
"""core-cycles.py: the dependency cycles between the core library's object files.

For each object file, `nm` says which symbols it defines and which it uses; an object
depends on every other object that defines a symbol it uses. The strongly connected
components of that graph with more than one object are the cycles. A layered core has
none except a few pairs that are one job split in two files (allowed with --allow, each
with its reason in the caller: tests/CMakeLists.txt's core_cycles test).

    scripts/core-cycles.py build/native/core/CMakeFiles/vor_objects.dir
    scripts/core-cycles.py DIR --allow scope:thread_registry --allow reader:reader_scan:record_decoder

Prints each component (objects by their base name, with the symbols that tie them) and
exits 1 when a component is not exactly one of the allowed sets, 2 on a usage error. Objects
are found recursively under each directory given (or named directly as .o files).
"""
import argparse
import os
import subprocess
import sys


def object_files(arguments):
    found = []
    paths = [p for argument in arguments for p in argument.split(";") if p]  # CMake lists too
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in os.walk(path):
                found += [os.path.join(root, f) for f in files if f.endswith(".o")]
        elif path.endswith(".o") and os.path.isfile(path):
            found.append(path)
        else:
            sys.exit(f"core-cycles: {path}: not a directory or an object file")
    return sorted(found)


def short_name(path):
    name = os.path.basename(path)
    for suffix in (".o", ".c", ".obj"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def symbols(nm, path):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run([nm, "-P", "-g", path], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind in ("U", "w", "v"):
            undefined.add(name)
        else:
            defined.add(name)
    return defined, undefined


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative; components in discovery order."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(sorted(component))
    return result


def print_layers(components, edges):
    """Level 0: objects that use no other; level n: one above the highest they use.
    Tarjan's algorithm returns components dependencies first, so one pass suffices."""
    component_of = {member: i for i, c in enumerate(components) for member in c}
    level = []
    for i, component in enumerate(components):
        below = {component_of[t] for m in component for t in edges[m]} - {i}
        level.append(1 + max((level[j] for j in below), default=-1))
    for n in range(max(level, default=-1) + 1):
        members = [" <-> ".join(c) if len(c) > 1 else c[0] for i, c in enumerate(components) if level[i] == n]
        print(f"layer {n}: {', '.join(sorted(members))}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="directories holding the core's object files, or .o files")
    parser.add_argument("--allow", action="append", default=[], metavar="A:B[:C...]",
                        help="objects allowed to form one cycle together (repeatable)")
    parser.add_argument("--layers", action="store_true",
                        help="also print the layers: each object (or allowed cycle) one level above what it uses")
    parser.add_argument("--nm", default=os.environ.get("NM", "nm"), help="the nm to use (default: nm, or $NM)")
    args = parser.parse_args()

    objects = object_files(args.paths)
    if not objects:
        print("core-cycles: no object files found", file=sys.stderr)
        return 2
    names = {}
    for path in objects:
        name = short_name(path)
        if name in names:
            print(f"core-cycles: two objects named {name}: {names[name]} and {path}", file=sys.stderr)
            return 2
        names[name] = path

    defined_by, uses = {}, {}
    for name, path in names.items():
        defined, undefined = symbols(args.nm, path)
        uses[name] = undefined
        for sym in defined:
            defined_by.setdefault(sym, name)
    edges = {name: set() for name in names}
    why = {}
    for name, undefined in uses.items():
        for sym in undefined:
            target = defined_by.get(sym)
            if target is not None and target != name:
                edges[name].add(target)
                why.setdefault((name, target), []).append(sym)

    allowed = set()
    for pair in args.allow:
        parts = pair.split(":")
        if len(parts) < 2 or not all(parts):
            print(f"core-cycles: --allow {pair}: expected A:B[:C...]", file=sys.stderr)
            return 2
        allowed.add(frozenset(parts))

    cycles = [c for c in strongly_connected(sorted(names), edges) if len(c) > 1]
    bad = 0
    for component in cycles:
        ok = frozenset(component) in allowed
        bad += not ok
        print(f"{'allowed' if ok else 'CYCLE'}: {len(component)} objects: {' '.join(component)}")
        members = set(component)
        for a in component:
            for b in sorted(edges[a] & members):
                print(f"    {a} -> {b}: {', '.join(sorted(why[(a, b)])[:4])}")
    if args.layers:
        print_layers(strongly_connected(sorted(names), edges), edges)
    print(f"{len(names)} objects, {len(cycles)} cycles ({bad} not allowed)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
