"""Generators, coroutines and async generators: each resumption is its own scope, so scopes
stay nested per thread however the program interleaves them."""

import asyncio

import pytest

import vor
from conftest import scopes_named


def ends(s):
    return s.start_ns + s.duration_ns


def assert_nested(frames):
    """Per frame and thread, every scope lies inside its parent and depths follow parents."""
    for f in frames:
        for s in f.scopes:
            if s.parent is None:
                assert s.depth == 0
                continue
            p = f.scopes[s.parent]
            assert p.thread_id == s.thread_id and p.depth == s.depth - 1
            assert p.start_ns <= s.start_ns and ends(s) <= ends(p)


@vor.profile
def numbers(n):
    for i in range(n):
        yield i
    return "done"


def test_each_resumption_of_a_generator_is_a_scope(record):
    def work():
        with vor.scope("consumer"):
            for _ in numbers(3):
                with vor.scope("between"):
                    pass

    frames = record(work)
    resumptions = scopes_named(frames, f"{__name__}.numbers")
    between = scopes_named(frames, "between")
    assert len(resumptions) == 4  # three values and the end
    assert len(between) == 3
    consumer = scopes_named(frames, "consumer")[0]
    scopes = frames[0].scopes
    # The generator's pieces and the consumer's work are siblings: the time between two
    # resumptions is not the generator's.
    for s in resumptions + between:
        assert scopes[s.parent] == consumer
    for b in between:
        assert not any(r.start_ns < b.start_ns and ends(b) < ends(r) for r in resumptions)
    assert_nested(frames)


@vor.profile
def echo():
    received = []
    try:
        while True:
            received.append((yield len(received)))
    except KeyError:
        yield "caught"
    finally:
        received.clear()


@vor.profile
def delegating():
    result = yield from numbers(2)
    yield result


def test_send_throw_close_and_yield_from(record):
    def work():
        g = echo()
        assert next(g) == 0
        assert g.send("a") == 1
        assert g.throw(KeyError("k")) == "caught"
        g.close()
        assert list(delegating()) == [0, 1, "done"]

    frames = record(work)
    assert len(scopes_named(frames, f"{__name__}.echo")) == 4  # next, send, throw, close
    inner = scopes_named(frames, f"{__name__}.numbers")
    outer = scopes_named(frames, f"{__name__}.delegating")
    assert len(outer) == 4 and len(inner) == 3
    for s in inner:
        assert frames[0].scopes[s.parent].name == f"{__name__}.delegating"
    assert_nested(frames)


@vor.profile
def broken():
    yield 1
    raise RuntimeError("inside")


def test_a_generator_that_raises_closes_its_scope(record):
    def work():
        with pytest.raises(RuntimeError):
            for _ in broken():
                pass
        with vor.scope("after"):
            pass

    frames = record(work)
    assert len(scopes_named(frames, f"{__name__}.broken")) == 2
    assert scopes_named(frames, "after")[0].depth == 0
    assert_nested(frames)


@vor.profile
async def child(i):
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return i


@vor.profile
async def parent():
    return await asyncio.gather(child(1), child(2), child(3))


def test_each_resumption_of_a_coroutine_is_a_scope(record):
    result = []
    frames = record(lambda: result.append(asyncio.run(parent())))
    assert result == [[1, 2, 3]]
    # Each child runs in three pieces (start, after each sleep), interleaved with the others.
    assert len(scopes_named(frames, f"{__name__}.child")) == 9
    assert len(scopes_named(frames, f"{__name__}.parent")) == 2
    assert_nested(frames)


@vor.profile
async def awaits_directly():
    return await child(7) + await child(8)


def test_awaiting_a_profiled_coroutine_nests_its_pieces(record):
    frames = record(lambda: asyncio.run(awaits_directly()))
    pieces = scopes_named(frames, f"{__name__}.child")
    assert len(pieces) == 6
    for s in pieces:
        assert frames[0].scopes[s.parent].name == f"{__name__}.awaits_directly"
    assert_nested(frames)


@vor.profile
async def fails_later():
    await asyncio.sleep(0)
    raise ValueError("late")


@vor.profile
async def waits_forever():
    await asyncio.Event().wait()


async def cancel_one():
    task = asyncio.create_task(waits_forever())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_exceptions_and_cancellation_close_coroutine_scopes(record):
    def work():
        with pytest.raises(ValueError):
            asyncio.run(fails_later())
        asyncio.run(cancel_one())
        with vor.scope("after"):
            pass

    frames = record(work)
    assert len(scopes_named(frames, f"{__name__}.fails_later")) == 2
    assert len(scopes_named(frames, f"{__name__}.waits_forever")) == 2  # started, then cancelled
    assert scopes_named(frames, "after")[0].depth == 0
    assert_nested(frames)


@vor.profile
async def ticks(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


async def consume_ticks():
    return [i async for i in ticks(3)]


def test_async_generators(record):
    result = []
    frames = record(lambda: result.append(asyncio.run(consume_ticks())))
    assert result == [[0, 1, 2]]
    # Per value: resumed until the sleep, then until the yield; and the final resumption.
    assert len(scopes_named(frames, f"{__name__}.ticks")) == 7
    assert_nested(frames)


@vor.profile
def scope_across_yield():
    with vor.scope("spans a yield"):
        yield 1
        yield 2


def test_a_with_block_spanning_a_yield_ends_with_the_resumption(record):
    def work():
        for _ in scope_across_yield():
            with vor.scope("consumer body"):
                pass

    frames = record(work)
    spans = scopes_named(frames, "spans a yield")
    resumptions = scopes_named(frames, f"{__name__}.scope_across_yield")
    # The block's scope closes when its resumption does (it cannot overlap the consumer's
    # scopes on this thread); its own exit later finds nothing to close.
    assert len(spans) == 1 and len(resumptions) == 3
    assert frames[0].scopes[spans[0].parent] == resumptions[0]
    assert all(s.depth == 0 for s in scopes_named(frames, "consumer body"))
    assert_nested(frames)
