"""capture_builder.py: format 1.1 captures built byte by byte from docs/FORMAT.md, for the
reader tests: what a writer may put in a capture (open scopes, unwound scopes, drops by
cause, undeclared names) and the state record a server puts before records cut from the
middle of one (§4.8), without needing a program that produces each case.

Records are written uncompressed (FORMAT.md §3.1 allows it); one system column, frame_ms.
"""

import struct


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def svarint(v):
    return varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def string(s):
    b = s.encode()
    return varint(len(b)) + b


def header(flame=True, producer="capture_builder", process="test", pid=42):
    body = (varint(1 if flame else 0) + struct.pack("<Q", 1_700_000_000_000_000_000) + varint(1) + string(producer)
            + string(process) + varint(pid) + varint(1)
            + varint(0) + string("frame_ms") + string("ms") + b"\x00" + struct.pack("<d", 1e-6)
            + varint(1) + string("tsc") + b"\x00" + struct.pack("<d", 20.0) + struct.pack("<d", 0.0))
    fixed = struct.pack("<HHI", 1, 1, len(body))
    head = b"\x89VOR\r\n\x1a\n" + fixed + struct.pack("<I", crc32c(fixed))
    return head + body + struct.pack("<I", crc32c(head[8:] + body))


def record(decoded):
    size = struct.pack("<I", len(decoded))
    head = size + struct.pack("<H", crc32c(size) & 0xFFFF)
    return head + struct.pack("<I", crc32c(head + decoded)) + decoded


def end_record():
    return record(b"\x02")


def declaration_lists(sites, threads):
    """The four declaration lists of §4.1 (no columns, no modules)."""
    out = varint(0)  # columns
    out += varint(len(sites)) + b"".join(
        varint(i) + string(n) + string(fn) + string(f) + varint(line) + varint(0) + varint(0)
        for i, n, fn, f, line in sites)
    out += varint(len(threads)) + b"".join(varint(i) + string(n) + varint(0) for i, n in threads)
    return out + varint(0)  # modules


def state(first_frame, sites=(), threads=()):
    """A state record (kind 3, §4.8): the declarations earlier records made, for a stream that
    starts in the middle of a capture (what vor serve sends before the records it cuts out)."""
    return record(b"\x03" + varint(1) + varint(first_frame) + declaration_lists(sites, threads))


def frame(index, start, duration, sites=(), threads=(), flame=None, drops=None, dropped_total=0):
    """flame: [(thread_id, ended, open)], ended = [(site, depth, unwound, start, duration)],
    open = [(site, start)]; drops: [(cause, thread_id, count)]; sites: [(id, name, function,
    file, line)]; threads: [(id, name)]."""
    declarations = bool(sites or threads)
    flags = (1 if declarations else 0) | (4 if drops is not None else 0) | (8 if flame is not None else 0)
    out = b"\x01" + varint(flags) + varint(index) + varint(start) + varint(duration) + varint(0)
    if declarations:
        out += declaration_lists(sites, threads)
    out += varint(0)  # user values
    if drops is not None:
        out += varint(dropped_total) + varint(len(drops))
        out += b"".join(varint(c) + varint(t) + varint(n) for c, t, n in drops)
    if flame is not None:
        out += varint(len(flame))
        for thread_id, ended, opened in flame:
            out += varint(thread_id) + varint(len(ended)) + varint(len(opened))
            prev = start
            for site, depth, unwound, s, d in ended:
                out += varint(site) + varint(depth << 1 | (1 if unwound else 0)) + svarint(s - prev) + varint(d)
                prev = s
            prev = start
            for site, s in opened:
                out += varint(site) + svarint(s - prev)
                prev = s
    return record(out)
