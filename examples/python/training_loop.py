"""training_loop.py: the demo program of examples/training_loop.c, in Python.

A training-style loop instrumented with vor: each step is one frame with nested scopes
(forward, backward, optimizer), a loader thread reads batches from a file and reports
its I/O, and the loss is a metric. At the end it prints the frame-time statistics.

The scopes, threads and metric carry the C program's names and the work per step is the
same (LAYERS matrices of WIDTH x WIDTH, blocks of ROWS_PER_BLOCK rows, a 64 KiB batch), so
`vor diff native.vor python.vor` compares the two scope by scope. With numpy the model is
the C program's size; without numpy (pure Python) it is 8 times narrower, so a step stays
short.

    python3 training_loop.py [STEPS]                  default 300 steps
    VOR_RECORD=run.vor VOR_RECORD_FLAME=1 python3 training_loop.py
"""

import math
import sys
import tempfile
import threading

import vor

try:
    import numpy as np
except ImportError:
    np = None

WIDTH = 512 if np is not None else 64
LAYERS = 4
ROWS_PER_BLOCK = 64 if np is not None else 8
BATCH_BYTES = 64 * 1024


class Model:
    """The "model": LAYERS weight matrices, the activations and their gradient."""

    def __init__(self):
        if np is not None:
            i = np.arange(WIDTH * WIDTH, dtype=np.int64)
            self.weights = [
                (((i * 7919 + layer) % 1000) / 1000.0 - 0.5).astype(np.float32).reshape(WIDTH, WIDTH)
                for layer in range(LAYERS)
            ]
            self.activations = np.zeros(WIDTH, dtype=np.float32)
        else:
            self.weights = [
                [[((r * WIDTH + c) * 7919 + layer) % 1000 / 1000.0 - 0.5 for c in range(WIDTH)] for r in range(WIDTH)]
                for layer in range(LAYERS)
            ]
            self.activations = [0.0] * WIDTH
        self.gradient = None
        self.loss = 4.0


@vor.profile("layer_forward")
def layer_forward(model, w):
    nxt = np.empty(WIDTH, dtype=np.float32) if np is not None else [0.0] * WIDTH
    for block in range(0, WIDTH, ROWS_PER_BLOCK):
        with vor.scope("matvec row block"):
            rows = slice(block, block + ROWS_PER_BLOCK)
            if np is not None:
                nxt[rows] = np.tanh((w[rows] @ model.activations) * 0.01)
            else:
                a = model.activations
                for r in range(block, block + ROWS_PER_BLOCK):
                    row = w[r]
                    nxt[r] = math.tanh(sum(row[c] * a[c] for c in range(WIDTH)) * 0.01)
    model.activations = nxt


@vor.profile("forward")
def forward(model):
    for w in model.weights:
        layer_forward(model, w)


@vor.profile("backward")
def backward(model):
    a = model.activations
    with vor.scope("gradients"):
        if np is not None:
            model.gradient = a * (1.0 - a * a)
        else:
            model.gradient = [x * (1.0 - x * x) for x in a]
    for layer in range(LAYERS - 1, -1, -1):
        with vor.scope("weight update"):
            w = model.weights[layer]
            if np is not None:
                w -= 1e-4 * np.outer(model.gradient, a)
            else:
                g = model.gradient
                for r in range(WIDTH):
                    row, gr = w[r], 1e-4 * g[r]
                    for c in range(WIDTH):
                        row[c] -= gr * a[c]


@vor.profile("optimizer_step")
def optimizer_step(model, step):
    model.loss = 0.05 + 3.95 * math.exp(-step / 80.0) + 0.02 * math.sin(step * 0.7)


class Loader:
    """A thread that reads the next batch from the data file while the model computes."""

    def __init__(self, data):
        self.data = data
        self.batch = b""
        self.wake = threading.Condition()
        self.wanted = self.done = 0
        self.quit = False
        self.thread = threading.Thread(target=self.run, name="loader")

    def load_batch(self):
        with vor.scope("load batch"):
            t0 = vor.now_ns()
            got = self.data.read(BATCH_BYTES)
            if len(got) < BATCH_BYTES:
                self.data.seek(0)
                got += self.data.read(BATCH_BYTES - len(got))
            vor.record_io(vor.now_ns() - t0, len(got))
            self.batch = got

    def run(self):
        with self.wake:
            while True:
                self.wake.wait_for(lambda: self.wanted != self.done or self.quit)
                if self.quit:
                    return
                self.wake.release()
                try:
                    self.load_batch()
                finally:
                    self.wake.acquire()
                self.done += 1
                self.wake.notify_all()

    def request(self):
        with self.wake:
            self.wanted += 1
            self.wake.notify_all()

    def wait(self):
        with vor.scope("wait for batch"):
            with self.wake:
                self.wake.wait_for(lambda: self.done >= self.wanted)

    def stop(self):
        with self.wake:
            self.quit = True
            self.wake.notify_all()
        self.thread.join()


def take_batch(model, batch):
    if np is not None:
        model.activations = np.frombuffer(batch[:WIDTH], dtype=np.uint8).astype(np.float32) / 255.0
    else:
        model.activations = [b / 255.0 for b in batch[:WIDTH]]


def train_step(model, loader, step):
    """One training step: one frame."""
    with vor.scope("train step"):
        loader.wait()
        take_batch(model, loader.batch)
        loader.request()  # the loader reads the next batch while we compute
        forward(model)
        backward(model)
        optimizer_step(model, step)
    vor.record_metric("loss", model.loss)
    vor.frame_mark()


def open_data_file():
    """A scratch file of deterministic bytes stands in for a dataset."""
    f = tempfile.TemporaryFile()
    f.write(bytes((i * 131 + 7) & 0xFF for i in range(4 * BATCH_BYTES)))
    f.seek(0)
    return f


def main(argv):
    try:
        steps = int(argv[1]) if len(argv) > 1 else 300
    except ValueError:
        steps = 0
    if steps <= 0:
        print(f'training_loop.py: STEPS must be a positive number (got "{argv[1]}")', file=sys.stderr)
        return 2
    model = Model()
    data = open_data_file()

    vor.set_thread_name("main")
    vor.record_metric_unit("loss", "nats")
    vor.enable()

    loader = Loader(data)
    loader.thread.start()
    loader.request()
    for step in range(steps):
        train_step(model, loader, step)
    loader.stop()

    stats = vor.frame_stats()
    counters = vor.counters()
    ms = 1e6
    print(f"training_loop.py: {steps} steps, final loss {model.loss:.4f}"
          f" ({'numpy' if np is not None else 'pure Python'}, width {WIDTH})")
    print(f"frame time: mean {stats['mean_ns'] / ms:.3f} ms, p50 {stats['p50_ns'] / ms:.3f} ms, "
          f"p95 {stats['p95_ns'] / ms:.3f} ms, p99 {stats['p99_ns'] / ms:.3f} ms, max {stats['max_ns'] / ms:.3f} ms")
    print(f"scopes: {counters['scopes_recorded']} recorded, {counters['scopes_dropped']} dropped; "
          f"one empty C scope costs {vor.empty_span_ns():.1f} ns")
    vor.shutdown()
    data.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
