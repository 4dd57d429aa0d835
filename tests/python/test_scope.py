"""with vor.scope(name): nesting, exceptions, one site per call site, names made at run
time, and scopes ended out of order or on another thread."""

import threading

import pytest

import vor
from conftest import scopes_named


def test_nesting_and_exceptions(record):
    def work():
        with vor.scope("a"):
            with vor.scope("b"):
                pass
            with pytest.raises(KeyError):
                with vor.scope("raises"):
                    raise KeyError("x")
            with vor.scope("c"):
                pass

    frames = record(work)
    scopes = frames[0].scopes
    a = scopes_named(frames, "a")[0]
    for name in ("b", "raises", "c"):
        s = scopes_named(frames, name)[0]
        assert s.depth == 1 and scopes[s.parent] == a


def first_site():
    with vor.scope("shared name"):
        pass


def second_site():
    with vor.scope("shared name"):
        pass


def test_one_site_per_calling_function(record):
    def work():
        for _ in range(3):
            first_site()
            second_site()

    frames = record(work)
    scopes = scopes_named(frames, "shared name")
    assert len(scopes) == 6
    sites = {(s.site_id, s.function, s.line) for s in scopes}
    assert len(sites) == 2
    functions = {fn: line for _, fn, line in sites}
    assert functions["first_site"] == first_site.__code__.co_firstlineno + 1
    assert functions["second_site"] == second_site.__code__.co_firstlineno + 1
    assert all(s.file == __file__ for s in scopes)


def test_names_made_at_run_time(record):
    def work():
        for i in range(9):
            with vor.scope(f"step {i % 3}"):
                pass

    frames = record(work)
    names = [s.name for s in frames[0].scopes]
    assert sorted(set(names)) == ["step 0", "step 1", "step 2"]
    assert len(names) == 9


def test_the_name_must_be_a_str():
    with pytest.raises(TypeError, match="must be a str"):
        vor.scope(b"bytes")
    assert vor.scope("x").name == "x"


def test_scopes_ended_out_of_order(record):
    before = vor.counters()["python_ends_out_of_order"]

    def work():
        outer, inner = vor.scope("outer by hand"), vor.scope("inner by hand")
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)  # closes inner too: it cannot outlive outer
        inner.__exit__(None, None, None)  # nothing left to close: ignored, counted
        with vor.scope("next"):
            pass

    frames = record(work)
    outer = scopes_named(frames, "outer by hand")[0]
    inner = scopes_named(frames, "inner by hand")[0]
    nxt = scopes_named(frames, "next")[0]
    assert outer.depth == 0 and inner.depth == 1 and frames[0].scopes[inner.parent] == outer
    assert nxt.depth == 0
    assert vor.counters()["python_ends_out_of_order"] == before + 1


def test_a_scope_ended_on_another_thread_is_ignored(record):
    before = vor.counters()["python_ends_out_of_order"]

    def work():
        s = vor.scope("moved")
        s.__enter__()
        t = threading.Thread(target=s.__exit__, args=(None, None, None))
        t.start()
        t.join()
        s.__exit__(None, None, None)  # its own thread closes it

    frames = record(work)
    moved = scopes_named(frames, "moved")
    assert len(moved) == 1 and moved[0].thread == threading.main_thread().name
    assert vor.counters()["python_ends_out_of_order"] == before + 1
