"""vor.Reader on captures built from docs/FORMAT.md (capture_builder.py): open scopes,
parents across the ended and open lists, unwound scopes, drops by cause and thread, names
whose declarations are missing, and a torn tail followed as it grows."""

import pytest

import vor
from capture_builder import end_record, frame, header, state

SITES = [(1, "outer", "main", "app.py", 10), (2, "inner", "work", "app.py", 20), (3, "leaf", "leaf", "app.py", 30)]
THREADS = [(7, "MainThread"), (9, "loader")]


def build(tmp_path, *records, finished=True):
    path = tmp_path / "built.vor"
    path.write_bytes(header() + b"".join(records) + (end_record() if finished else b""))
    return str(path)


def test_open_scopes_and_parents(tmp_path):
    # Frame 0 (1000..2000): "outer" (open since 1100) holds "inner" (open since 1200), which
    # holds "leaf" 1300..1400, ended. Frame 1 (2000..3000): inner ends at 2500, outer stays open.
    f0 = frame(0, 1000, 1000, SITES, THREADS, flame=[(7, [(3, 2, False, 1300, 100)], [(1, 1100), (2, 1200)])])
    f1 = frame(1, 2000, 1000, SITES, THREADS, flame=[(7, [(2, 1, False, 1200, 1300)], [(1, 1100)])])
    frames = list(vor.Reader(build(tmp_path, f0, f1)))
    s0 = frames[0].scopes
    assert [(s.name, s.depth, s.open) for s in s0] == [("leaf", 2, False), ("outer", 0, True), ("inner", 1, True)]
    assert s0[0].parent == 2 and s0[2].parent == 1 and s0[1].parent is None
    assert s0[1].duration_ns == 2000 - 1100 and s0[2].duration_ns == 2000 - 1200  # to the frame's end
    assert (s0[0].start_ns, s0[0].duration_ns) == (1300, 100)
    s1 = frames[1].scopes
    assert [(s.name, s.open) for s in s1] == [("inner", False), ("outer", True)]
    assert s1[0].parent == 1 and s1[0].start_ns == 1200 and s1[0].duration_ns == 1300
    assert all(s.thread == "MainThread" and s.thread_id == 7 for f in frames for s in f.scopes)
    assert s0[0].function == "leaf" and s0[0].file == "app.py" and s0[0].line == 30


def test_parents_are_per_thread_indexes_into_the_frame_list(tmp_path):
    f0 = frame(0, 0, 1000, SITES, THREADS, flame=[
        (7, [(2, 1, False, 100, 50), (1, 0, False, 50, 200)], []),
        (9, [(3, 1, True, 300, 10), (2, 0, False, 250, 100)], []),
    ])
    scopes = list(vor.Reader(build(tmp_path, f0)))[0].scopes
    assert [s.thread for s in scopes] == ["MainThread", "MainThread", "loader", "loader"]
    assert scopes[0].parent == 1 and scopes[2].parent == 3  # the loader's list starts at index 2
    assert scopes[2].unwound and not scopes[0].unwound


def test_drops_by_cause_and_thread(tmp_path):
    f0 = frame(0, 0, 1000, SITES, THREADS, drops=[(1, 9, 5), (2, 7, 3), (6, 7, 11), (99, 0, 1)], dropped_total=9)
    f = list(vor.Reader(build(tmp_path, f0)))[0]
    assert f.dropped_scopes == 9 and f.scopes == [] and not f.has_flame
    assert [tuple(d) for d in f.drops] == [
        ("thread_buffer_full", 9, "loader", 5),
        ("too_deep", 7, "MainThread", 3),
        ("filtered", 7, "MainThread", 11),
        ("cause 99", 0, None, 1),
    ]


def test_undeclared_sites_and_threads_get_numbered_names(tmp_path):
    f0 = frame(0, 0, 1000, flame=[(12, [(5, 0, False, 10, 20), (0, 0, False, 40, 5)], [])])
    scopes = list(vor.Reader(build(tmp_path, f0)))[0].scopes
    assert [(s.name, s.thread, s.function, s.line) for s in scopes] == [
        ("site 5", "thread 12", "", 0), ("site 0", "thread 12", "", 0)]


def test_a_stream_from_the_middle_reads_its_names_from_the_state_record(tmp_path):
    # records cut from the middle of a capture: their sites and threads were declared earlier;
    # the state record (kind 3) in front of them declares them again (FORMAT.md 4.8)
    f10 = frame(10, 10000, 1000, flame=[(7, [(2, 1, False, 10100, 50)], [(1, 10050)])])
    scopes = list(vor.Reader(build(tmp_path, state(10, SITES, THREADS), f10)))[0].scopes
    assert [(s.name, s.thread, s.open) for s in scopes] == [("inner", "MainThread", False), ("outer", "MainThread", True)]
    bare = list(vor.Reader(build(tmp_path, f10)))[0].scopes  # without it: numbered names, nothing else lost
    assert [(s.name, s.thread) for s in bare] == [("site 2", "thread 7"), ("site 1", "thread 7")]


def test_a_torn_tail_is_waited_for_then_read(tmp_path):
    f0 = frame(0, 0, 1000, SITES, THREADS, flame=[(7, [(1, 0, False, 10, 20)], [])])
    f1 = frame(1, 1000, 1000, SITES, THREADS, flame=[(7, [(2, 0, False, 1010, 20)], [])])
    data = header() + f0 + f1 + end_record()
    path = tmp_path / "growing.vor"
    cut = len(header()) + len(f0) + 5  # in the middle of frame 1's record
    path.write_bytes(data[:cut])
    r = vor.Reader(str(path))
    assert [f.index for f in r] == [0]
    assert r.read() is None and not r.finished and r.damage_count == 0
    with open(path, "ab") as out:
        out.write(data[cut:])
    assert [f.index for f in r] == [1] and r.finished
    info = r.info
    assert info["clock_source"] == "tsc" and info["scope_cost_ns"] == 20.0 and info["process"] == "test"


@pytest.mark.parametrize("cut", [3, 12, 30])
def test_a_header_still_arriving_is_not_an_error(tmp_path, cut):
    path = tmp_path / "new.vor"
    path.write_bytes(header()[:cut])
    r = vor.Reader(str(path))
    assert r.read() is None and r.info is None
    with open(path, "ab") as out:
        out.write(header()[cut:] + frame(0, 0, 10) + end_record())
    assert [f.index for f in r] == [0] and r.info["pid"] == 42
