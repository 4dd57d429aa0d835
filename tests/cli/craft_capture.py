"""craft_capture.py: writes .vor captures byte by byte from docs/FORMAT.md, for tests that
need inputs no instrumented program makes: durations near 2^63, thread ids >= 65,536,
undeclared site ids near 2^32, sparse column ids, renamed threads, control characters in
names, frames whose scopes nest in any chosen way.

It is written from the specification, not from vor's writer (core/src/record_encoder.c),
so a capture it makes is also a check that the reader follows the text. Records are
written "stored" (the format's uncompressed form), or compressed by a small LZ4 block
compressor of its own (each block stands alone, a valid member of 1.0's LZ4 chain); the
checks are CRC-32C.

    w = CaptureWriter(flame=True)
    w.frame(duration=16_000_000, sites=[(1, "step", "", "", 0)], threads=[(0, "main", 0)],
            flame={0: [(1, 0, 100, 5000)]})       # thread 0: site 1, depth 0, start, duration
    w.end()
    open(path, "wb").write(w.data())

Only the standard library is used.
"""
import struct

FRAME_DECLARATIONS, FRAME_PRESENCE, FRAME_DROPS, FRAME_FLAME = 1, 2, 4, 8


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def varint(v):
    assert 0 <= v < 1 << 64, v
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def svarint(v):
    assert -(1 << 63) <= v < 1 << 63, v
    return varint(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


def string(s):
    b = s if isinstance(s, bytes) else s.encode("utf-8")
    return varint(len(b)) + b


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def xorf64(value, prev):
    x = f64_bits(value) ^ f64_bits(prev)
    if x == 0:
        return b"\x00"
    raw = x.to_bytes(8, "little")
    t = 0
    while raw[t] == 0:
        t += 1
    lead = 0
    while raw[7 - lead] == 0:
        lead += 1
    n = 8 - lead - t
    return bytes([(lead << 4) | n]) + raw[t:t + n]


def lz4_block(data):
    """A raw LZ4 block (no frame header) that decodes to `data`: a greedy compressor, enough
    for the repetitive records tests make (a frame of a million identical scopes shrinks
    about 250 times, which is the point: decompression amplification)."""
    n = len(data)
    out = bytearray()

    def length_bytes(v):
        while v >= 255:
            out.append(255)
            v -= 255
        out.append(v)

    def sequence(lit_start, lit_end, offset=0, match_len=0):
        lit = lit_end - lit_start
        token = (min(lit, 15) << 4) | (min(match_len - 4, 15) if match_len else 0)
        out.append(token)
        if lit >= 15:
            length_bytes(lit - 15)
        out.extend(data[lit_start:lit_end])
        if match_len:
            out.extend(struct.pack("<H", offset))
            if match_len - 4 >= 15:
                length_bytes(match_len - 4 - 15)

    table = {}
    anchor = i = 0
    limit = n - 12  # the last match starts at least 12 bytes before the end
    while i < limit:
        key = data[i:i + 4]
        cand = table.get(key)
        table[key] = i
        if cand is not None and i - cand <= 65535:
            m, step = 4, 1 << 16
            while step:  # extend by big slices first: a run of megabytes in a few compares
                while i + m + step <= n - 5 and data[cand + m:cand + m + step] == data[i + m:i + m + step]:
                    m += step
                step >>= 1
            sequence(anchor, i, i - cand, m)
            i += m
            anchor = i
        else:
            i += 1
    sequence(anchor, n)  # the last literals
    return bytes(out)


# The system columns a Linux capture declares (FORMAT.md section 2): name, unit, encoding, scale.
LINUX_COLUMNS = [("frame_ms", "ms", 0, 1e-6), ("memory_mb", "MB", 1, 1e-6), ("io_ms", "ms", 0, 1e-3),
                 ("io_MB", "MB", 0, 1e-6), ("cpu_ms", "ms", 0, 1e-3)]


class CaptureWriter:
    def __init__(self, flame=True, system_columns=(("frame_ms", "ms", 0, 1e-6),), producer="craft_capture.py",
                 process="crafted", pid=4242, wall_epoch_ns=1_700_000_000_000_000_000, compress=False):
        """compress: LZ4 blocks (lz4_block) instead of stored records."""
        self.system = list(system_columns)
        self.compress = compress
        body = bytearray()
        body += varint(1 if flame else 0)
        body += struct.pack("<Q", wall_epoch_ns & ((1 << 64) - 1))
        body += varint(1)
        body += string(producer) + string(process) + varint(pid)
        body += varint(len(self.system))
        for i, (name, unit, enc, scale) in enumerate(self.system):
            body += varint(i) + string(name) + string(unit) + bytes([enc]) + struct.pack("<d", scale)
        fixed = struct.pack("<HHI", 1, 0, len(body)) + bytes(body)
        self.out = bytearray(b"\x89VOR\r\n\x1a\n") + fixed + struct.pack("<I", crc32c(fixed))
        self.prev_index = None
        self.prev_start = 0
        self.prev_duration = 0
        self.prev_user = {}

    def record(self, decoded):
        if self.compress:
            payload = varint(len(decoded) << 1) + lz4_block(decoded)
        else:
            payload = varint(len(decoded) << 1 | 1) + decoded  # stored, not compressed
        length = struct.pack("<I", len(payload) + 4)
        check = struct.pack("<I", crc32c(length + payload))
        self.out += length + check + payload

    def frame(self, duration, index=None, start=None, overhead=0, columns=(), sites=(), threads=(), values=None,
              dropped=None, flame=None, presence=None, system_values=None):
        """columns: (id, name, unit); sites: (id, name, function, file, line); threads: (id, name, os_tid);
        values: {user column id: float}; flame: {thread id: [(site, depth, start, duration), ...]} (a dict
        or a list of (thread id, scopes) pairs, kept in order); system_values: raw values of columns
        1..S-1 present (a list, in id order)."""
        expected_index = 0 if self.prev_index is None else self.prev_index + 1
        expected_start = 0 if self.prev_index is None else self.prev_start + self.prev_duration
        index = expected_index if index is None else index
        start = expected_start if start is None else start
        flags = 0
        if columns or sites or threads:
            flags |= FRAME_DECLARATIONS
        if presence is not None:
            flags |= FRAME_PRESENCE
        if dropped:
            flags |= FRAME_DROPS
        if flame is not None:
            flags |= FRAME_FLAME
        d = bytearray([1])
        d += varint(flags) + varint(index - expected_index) + svarint(start - expected_start)
        d += varint(duration) + varint(overhead)
        if flags & FRAME_DECLARATIONS:
            d += varint(len(columns))
            for cid, name, unit in columns:
                d += varint(cid) + string(name) + string(unit)
            d += varint(len(sites))
            for sid, name, function, file, line in sites:
                d += varint(sid) + string(name) + string(function) + string(file) + varint(line)
            d += varint(len(threads))
            for tid, name, os_tid in threads:
                d += varint(tid) + string(name) + varint(os_tid)
        if presence is not None:
            d += varint(presence)
        for v in system_values or []:
            d += svarint(v)
        values = values or {}
        d += varint(len(values))
        prev_id = len(self.system) - 1
        for cid in sorted(values):
            d += varint(cid - prev_id - 1) + xorf64(values[cid], self.prev_user.get(cid, 0.0))
            self.prev_user[cid] = values[cid]
            prev_id = cid
        if dropped:
            d += varint(dropped)
        if flame is not None:
            items = list(flame.items()) if isinstance(flame, dict) else list(flame)
            d += varint(len(items))
            for tid, scopes in items:
                d += varint(tid) + varint(len(scopes))
                prev = start
                encoded, memo = [], {}  # a million equal scopes encode once
                for scope in scopes:
                    key = (scope, scope[2] - prev)
                    b = memo.get(key)
                    if b is None:
                        site, depth, s_start, s_dur = scope
                        b = memo[key] = varint(site) + varint(depth) + svarint(s_start - prev) + varint(s_dur)
                    encoded.append(b)
                    prev = scope[2]
                d += b"".join(encoded)
        self.record(bytes(d))
        self.prev_index, self.prev_start, self.prev_duration = index, start, duration

    def end(self):
        self.record(b"\x02")

    def data(self):
        return bytes(self.out)

    def save(self, path):
        with open(path, "wb") as fh:
            fh.write(self.out)
        return path
