"""vor for Python: profile Python programs into vor captures, and read captures.

Instrument::

    import vor

    @vor.profile                        # a scope per call, named module.Class.method
    def train_step(batch): ...

    vor.record_metric_unit("loss", "nats")
    vor.enable()                        # reads VOR_RECORD, VOR_RECORD_FLAME, VOR_TRACE, ...
    for batch in batches:
        with vor.scope("load"):         # a scope from here to the block's exit
            ...
        train_step(batch)
        vor.record_metric("loss", loss)
        vor.frame_mark()                # one frame per step
    vor.shutdown()

Read::

    for frame in vor.Reader("run.vor"):
        print(frame.index, frame.metrics["frame_ms"], [s.name for s in frame.scopes])
    table = vor.read_metrics("run.vor")  # one numpy array (or list) per metric

Whole programs: ``python -m vor run --record run.vor --flame --all-functions script.py``.

Every scope is a C call into libvor (the extension vor._vor): the decorator and the
context manager are C objects. Generators and coroutines are timed per resumption. See
the README's Python section for the details and costs.
"""

import atexit as _atexit
import threading as _threading  # noqa: F401  threads are named after their threading name, the main one too

from . import _vor
from ._vor import (
    CaptureError,
    Column,
    Damage,
    Drop,
    Frame,
    Scope,
    calibrate,
    counters,
    disable,
    empty_span_ns,
    enable,
    flush_recording,
    frame_mark,
    frame_stats,
    frame_stats_percentile,
    frame_stats_reset,
    is_enabled,
    now_ns,
    profile,
    record_io,
    record_metric,
    record_metric_unit,
    scope,
    set_thread_name,
    setup,
    shutdown,
    skip,
    version,
)
from ._classes import all_functions
from ._reading import MetricTable, Reader, read_metrics

__version__ = version

__all__ = [
    "CaptureError",
    "Column",
    "Damage",
    "Drop",
    "Frame",
    "MetricTable",
    "Reader",
    "Scope",
    "all_functions",
    "calibrate",
    "counters",
    "disable",
    "empty_span_ns",
    "enable",
    "flush_recording",
    "frame_mark",
    "frame_stats",
    "frame_stats_percentile",
    "frame_stats_reset",
    "is_enabled",
    "now_ns",
    "profile",
    "read_metrics",
    "record_io",
    "record_metric",
    "record_metric_unit",
    "scope",
    "set_thread_name",
    "setup",
    "shutdown",
    "skip",
    "version",
]


def _at_exit():
    # The profiling hook must not run while the interpreter is being torn down. The
    # outputs themselves are closed by libvor's own exit handler (a complete capture, a
    # valid trace), which runs after Python's.
    _vor._hook_stop()


_atexit.register(_at_exit)
