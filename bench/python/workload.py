"""workload.py: the script python.bench.py profiles three ways (plain, cProfile, python -m
vor run --all-functions): many small Python calls, one `step` call per frame.

    workload.py STEPS calls   only Python calls (fib and a method): every event a
                              profiler sees is a Python call, vor's worst case
    workload.py STEPS mixed   Python calls that call builtins and str methods, as most code
                              does (cProfile times those too; vor's hook skips them)

Prints "CALLS SECONDS": the Python calls the steps made and the CPU time they took
(start-up and profiler set-up excluded; CPU time, not wall time, so that other programs on
a shared machine weigh less).
"""

import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Accumulator:
    def __init__(self):
        self.total = 0

    def add(self, value):
        self.total += value


def fib_calls(n):
    a, b = 1, 1  # calls(n) = 2 * fib(n + 1) - 1
    for _ in range(n):
        a, b = b, a + b
    return 2 * a - 1


WORDS = [f"  Word{i % 37}  " for i in range(100)]


def normalize(word):
    return word.strip().lower()


def step(acc, mode):
    if mode == "calls":
        acc.add(fib(15))  # 1,973 calls of fib
        for i in range(200):
            acc.add(i)
    else:
        seen = {}
        for word in WORDS:
            key = normalize(word)
            seen[key] = seen.get(key, 0) + 1
            acc.add(len(key))


def python_calls(mode):
    if mode == "calls":
        return 1 + 1 + fib_calls(15) + 200  # step, add(fib), fib's calls, add(i)
    return 1 + 2 * len(WORDS)  # step, normalize and add per word


def main():
    steps, mode = int(sys.argv[1]), sys.argv[2]
    if mode not in ("calls", "mixed"):
        sys.exit("workload.py: the mode is calls or mixed")
    acc = Accumulator()
    start = time.process_time()
    for _ in range(steps):
        step(acc, mode)
    seconds = time.process_time() - start
    print(steps * python_calls(mode), seconds)


main()
