"""Reading captures from Python: vor.Reader (the C reader, plus follow()) and
vor.read_metrics (one array per metric).

The C extension does the reading (vor._vor.Reader over reader.h, vor._vor._read_metrics);
this module adds what is naturally Python: waiting for a growing file, and numpy arrays.
"""

import array
import time

from . import _vor

__all__ = ["MetricTable", "Reader", "read_metrics"]


class Reader(_vor.Reader):
    """Reader(path): reads a .vor capture, finished or still being written.

    Iterating gives every complete frame there is now (vor.Frame); iterating again later
    gives the frames appended meanwhile. read() returns the next frame or None. follow()
    waits for new frames until the writer finishes the capture. Reader() without a path
    reads bytes given to feed().

    Damaged records are skipped and listed in `damage` (offset, length, problem); a damaged
    header, a file that is not a capture or an I/O error raise vor.CaptureError.
    """

    def follow(self, poll_interval=0.05, timeout=None, idle_timeout=None):
        """Yields frames as the writer appends them, until its end record is read (the
        program called vor.shutdown() or exited), `timeout` seconds passed, or no frame came
        for `idle_timeout` seconds (a writer that crashed never writes its end record)."""
        if poll_interval <= 0:
            raise ValueError("follow: poll_interval must be positive")
        start = last = time.monotonic()
        while True:
            frame = self.read()
            if frame is not None:
                last = time.monotonic()
                yield frame
                continue
            if self.finished:
                return
            now = time.monotonic()
            if timeout is not None and now - start >= timeout:
                return
            if idle_timeout is not None and now - last >= idle_timeout:
                return
            time.sleep(poll_interval)

    def __repr__(self):
        state = "closed" if self.closed else ("finished" if self.finished else "open")
        return f"<vor.Reader {self.path!r} {state}>"


class MetricTable(dict):
    """What read_metrics returns: a dict from metric name to its values, one per frame (NaN
    where a frame has no value of it), plus the frames' `index`, `start_ns` and
    `duration_ns`, each metric's `units`, the `system` metric names, and the reader's
    `damage`, `damage_count` and `finished`."""

    def __repr__(self):
        return f"<vor.MetricTable {len(self.index)} frames: {', '.join(self)}>"


def _numpy(required):
    if required is False:
        return None
    try:
        import numpy
    except ImportError:
        if required:
            raise
        return None
    return numpy


def read_metrics(path, numpy=None):
    """Every metric of the capture at `path` as one array per metric (numpy arrays of
    float64 when numpy is importable, lists of floats otherwise; numpy=True requires it,
    numpy=False gives lists). The file is read as it is now; a capture still being
    written gives its complete frames so far."""
    raw = _vor._read_metrics(path)
    np = _numpy(numpy)

    def column(data, code):
        if np is not None:
            dtype = {"d": np.float64, "q": np.int64, "Q": np.uint64}[code]
            return np.frombuffer(bytearray(data), dtype=dtype)
        values = array.array(code)
        values.frombytes(data)
        return values.tolist()

    table = MetricTable()
    table.units = {}
    table.system = set()
    for name, unit, is_system, data in raw["columns"]:
        table[name] = column(data, "d")
        table.units[name] = unit
        if is_system:
            table.system.add(name)
    table.index = column(raw["index"], "Q")
    table.start_ns = column(raw["start_ns"], "q")
    table.duration_ns = column(raw["duration_ns"], "q")
    table.damage = raw["damage"]
    table.damage_count = raw["damage_count"]
    table.finished = raw["finished"]
    return table

