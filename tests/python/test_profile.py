"""@vor.profile, @vor.all_functions and @vor.skip: names, methods, exceptions, recursion,
threads, and what the decorated object still looks like to Python."""

import inspect
import threading

import pytest

import vor
from conftest import scopes_named


def full_name(func):
    return f"{func.__module__}.{func.__qualname__}"


@vor.profile
def add(a, b=1, *, c=0):
    """Adds."""
    return a + b + c


class Model:
    @vor.profile
    def step(self, x):
        return x * 2

    @staticmethod
    @vor.profile
    def static_inside(x):
        return x + 1

    @vor.profile
    @staticmethod
    def static_outside(x):
        return x + 2

    @vor.profile
    @classmethod
    def build(cls):
        return cls()


@vor.profile("custom step")
def custom(x):
    return x


@vor.profile(name="keyword name")
def keyword(x):
    return x


def test_names_default_to_module_class_method(record):
    m = Model()

    def work():
        add(1)
        m.step(2)
        step = m.step  # a bound method object, called later
        step(3)
        Model.static_inside(1)
        m.static_outside(1)
        Model.build()
        custom(1)
        keyword(1)

    frames = record(work)
    names = [s.name for f in frames for s in f.scopes]
    assert names.count(f"{__name__}.add") == 1
    assert names.count(f"{__name__}.Model.step") == 2
    assert names.count(f"{__name__}.Model.static_inside") == 1
    assert names.count(f"{__name__}.Model.static_outside") == 1
    assert names.count(f"{__name__}.Model.build") == 1
    assert names.count("custom step") == 1
    assert names.count("keyword name") == 1
    s = scopes_named(frames, f"{__name__}.Model.step")[0]
    assert s.function == "Model.step"
    assert s.file == __file__
    assert s.line == Model.step.__code__.co_firstlineno


def test_calls_pass_arguments_and_results_through():
    assert add(1, 2, c=3) == 6
    assert add(1) == 2
    assert Model().step(21) == 42
    assert Model.static_inside(1) == 2 and Model.static_outside(1) == 3
    assert isinstance(Model.build(), Model)
    with pytest.raises(TypeError):
        add()  # the function's own error


def test_the_decorated_object_looks_like_the_function():
    assert add.__name__ == "add" and add.__doc__ == "Adds." and add.__wrapped__(1) == 2
    assert str(inspect.signature(add)) == "(a, b=1, *, c=0)"
    assert add.__code__ is add.__wrapped__.__code__
    assert add.scope_name == f"{__name__}.add"

    @vor.profile
    async def coro():
        pass

    @vor.profile
    def gen():
        yield 1

    assert inspect.iscoroutinefunction(coro)
    assert inspect.isgeneratorfunction(gen)
    assert vor.profile(add) is add  # already profiled: unchanged


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="expected a function or a scope name"):
        vor.profile(3)
    with pytest.raises(TypeError, match="must be a str"):
        vor.profile(name=3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        vor.profile(add, nam="x")


@vor.profile
def fails(n):
    raise ValueError(n)


@vor.profile
def sibling():
    pass


def test_an_exception_closes_the_scope(record):
    def work():
        with vor.scope("outer"):
            for i in range(3):
                with pytest.raises(ValueError):
                    fails(i)
            sibling()

    before = vor.counters()["python_ends_out_of_order"]
    frames = record(work)
    failed = scopes_named(frames, f"{__name__}.fails")
    after = scopes_named(frames, f"{__name__}.sibling")
    outer = scopes_named(frames, "outer")
    assert len(failed) == 3 and len(after) == 1 and len(outer) == 1
    # The scopes that raised were closed: the next one is their sibling, not their child.
    scopes = frames[0].scopes
    for s in failed + after:
        assert s.depth == 1 and scopes[s.parent].name == "outer"
    assert vor.counters()["python_ends_out_of_order"] == before


@vor.profile
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_recursion_nests(record):
    frames = record(lambda: fib(7))
    calls = scopes_named(frames, f"{__name__}.fib")
    assert len(calls) == 41  # calls of fib(7): 2 * fib(8) - 1
    scopes = frames[0].scopes
    assert max(s.depth for s in calls) == 6
    for s in calls:
        if s.depth == 0:
            assert s.parent is None
        else:
            p = scopes[s.parent]
            assert p.name == s.name and p.depth == s.depth - 1
            assert p.start_ns <= s.start_ns and s.start_ns + s.duration_ns <= p.start_ns + p.duration_ns


@vor.profile
def per_thread_work(i):
    return i


def test_each_thread_gets_its_own_track(record):
    threads_n, calls = 4, 50
    barrier = threading.Barrier(threads_n)

    def body():
        barrier.wait()  # all running at once
        for i in range(calls):
            per_thread_work(i)

    def work():
        threads = [threading.Thread(target=body, name=f"worker {k}") for k in range(threads_n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    frames = record(work)
    scopes = scopes_named(frames, f"{__name__}.per_thread_work")
    by_thread = {}
    for s in scopes:
        by_thread.setdefault(s.thread, set()).add(s.thread_id)
        assert s.depth == 0
    assert sorted(by_thread) == [f"worker {k}" for k in range(threads_n)]
    assert all(len(ids) == 1 for ids in by_thread.values())
    assert len({next(iter(ids)) for ids in by_thread.values()}) == threads_n
    assert len(scopes) == threads_n * calls


def test_set_thread_name_wins_over_threading_name(record):
    def body():
        vor.set_thread_name("named by vor")
        per_thread_work(0)

    def work():
        t = threading.Thread(target=body, name="threading name")
        t.start()
        t.join()

    frames = record(work)
    assert [s.thread for s in scopes_named(frames, f"{__name__}.per_thread_work")] == ["named by vor"]


@vor.all_functions
class Trainer:
    def __init__(self):
        self.value = 0

    def step(self):
        self.value += 1
        return self.helper()

    def helper(self):
        return self.value

    @vor.skip
    def quiet(self):
        return -1

    @staticmethod
    def make():
        return Trainer()

    @classmethod
    def kind(cls):
        return cls.__name__

    @property
    def doubled(self):
        return self.value * 2


def test_all_functions_profiles_every_method_but_skipped_ones(record):
    def work():
        t = Trainer.make()
        t.step()
        t.quiet()
        Trainer.kind()
        assert t.doubled == 2

    frames = record(work)
    names = {s.name for f in frames for s in f.scopes}
    prefix = f"{__name__}.Trainer."
    for method in ("__init__", "step", "helper", "make", "kind", "doubled"):
        assert prefix + method in names, method
    assert prefix + "quiet" not in names
    helper = scopes_named(frames, prefix + "helper")[0]
    assert frames[0].scopes[helper.parent].name == prefix + "step"


def test_all_functions_takes_classes_only():
    with pytest.raises(TypeError, match="decorates a class"):
        vor.all_functions(add)


def test_nothing_is_recorded_while_disabled(tmp_path):
    vor.disable()
    before = vor.counters()["scopes_recorded"]
    assert add(1) == 2
    with vor.scope("off"):
        pass
    assert vor.counters()["scopes_recorded"] == before


@vor.profile
def deep(n):
    return 0 if n == 0 else deep(n - 1) + 1


def test_recursion_deeper_than_vor_records_stays_paired(record):
    frames = record(lambda: (deep(599), sibling()))
    calls = scopes_named(frames, f"{__name__}.deep")
    assert len(calls) == 256  # vor records VOR_MAX_DEPTH levels; the deeper ones are dropped
    assert sum(f.dropped_scopes for f in frames) == 600 - 256
    assert scopes_named(frames, f"{__name__}.sibling")[0].depth == 0
