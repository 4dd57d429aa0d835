"""craft_capture.py: writes .vor captures (format 1.0 or 1.1) byte by byte from docs/FORMAT.md, for tests that
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
import itertools
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
    """minor=0 writes format 1.0, minor=1 format 1.1 (docs/FORMAT.md: checked record sizes,
    absolute index and start, open scopes, drops by cause, clock and cost fields, modules)."""

    def __init__(self, flame=True, system_columns=(("frame_ms", "ms", 0, 1e-6),), producer="craft_capture.py",
                 process="crafted", pid=4242, wall_epoch_ns=1_700_000_000_000_000_000, compress=False, minor=0,
                 clock_resolution_ns=0, clock_source="", cross_origin_isolated=0, scope_cost_ns=0.0,
                 function_cost_ns=0.0):
        """compress: LZ4 blocks (lz4_block) instead of stored records. cross_origin_isolated:
        the header byte (0 not a page or unknown, 1 not isolated, 2 isolated)."""
        self.system = list(system_columns)
        self.compress = compress
        self.minor = minor
        body = bytearray()
        body += varint(1 if flame else 0)
        body += struct.pack("<Q", wall_epoch_ns & ((1 << 64) - 1))
        body += varint(1)
        body += string(producer) + string(process) + varint(pid)
        body += varint(len(self.system))
        for i, (name, unit, enc, scale) in enumerate(self.system):
            body += varint(i) + string(name) + string(unit) + bytes([enc]) + struct.pack("<d", scale)
        if minor >= 1:
            body += varint(clock_resolution_ns) + string(clock_source) + bytes([cross_origin_isolated])
            body += struct.pack("<dd", scope_cost_ns, function_cost_ns)
        versions = struct.pack("<HHI", 1, minor, len(body))
        if minor >= 1:
            fixed = versions + struct.pack("<I", crc32c(versions)) + bytes(body)
        else:
            fixed = versions + bytes(body)
        self.out = bytearray(b"\x89VOR\r\n\x1a\n") + fixed + struct.pack("<I", crc32c(fixed))
        self.prev_index = None
        self.prev_start = 0
        self.prev_duration = 0
        self.prev_user = {}

    def record(self, decoded):
        if self.minor >= 1:
            if self.compress:
                body, size = varint(len(decoded)) + lz4_block(decoded), 1 << 31
            else:
                body, size = decoded, 0
            size = struct.pack("<I", size | len(body))
            head = size + struct.pack("<H", crc32c(size) & 0xFFFF)
            self.out += head + struct.pack("<I", crc32c(head + body)) + body
            return
        if self.compress:
            payload = varint(len(decoded) << 1) + lz4_block(decoded)
        else:
            payload = varint(len(decoded) << 1 | 1) + decoded  # stored, not compressed
        length = struct.pack("<I", len(payload) + 4)
        check = struct.pack("<I", crc32c(length + payload))
        self.out += length + check + payload

    def frame(self, duration, index=None, start=None, overhead=0, columns=(), sites=(), threads=(), modules=(),
              values=None, dropped=None, drops=None, flame=None, presence=None, system_values=None):
        """columns: (id, name, unit); sites: (id, name, function, file, line[, module id, address]);
        threads: (id, name, os_tid); modules (1.1): (id, path, build id, load address);
        values: {user column id: float}; dropped: the frame's total; drops (1.1): (cause,
        thread id, count) entries; flame: {thread id: scopes} (a dict, or a list of (thread id,
        scopes) pairs kept in order), scopes being (site, depth, start, duration) for ended ones,
        in end order, then ("open", site, start) for those still open, outermost first; an
        ended scope may add a fifth item, 1 for unwound (1.1). system_values: raw values of
        columns 1..S-1 present (a list, in id order)."""
        expected_index = 0 if self.prev_index is None else self.prev_index + 1
        expected_start = 0 if self.prev_index is None else self.prev_start + self.prev_duration
        index = expected_index if index is None else index
        start = expected_start if start is None else start
        v11 = self.minor >= 1
        flags = 0
        if columns or sites or threads or modules:
            flags |= FRAME_DECLARATIONS
        if presence is not None:
            flags |= FRAME_PRESENCE
        if dropped or drops:
            flags |= FRAME_DROPS
        if flame is not None:
            flags |= FRAME_FLAME
        d = bytearray([1])
        d += varint(flags)
        if v11:
            d += varint(index) + varint(start)
        else:
            d += varint(index - expected_index) + svarint(start - expected_start)
        d += varint(duration) + varint(overhead)
        if flags & FRAME_DECLARATIONS:
            d += varint(len(columns))
            for cid, name, unit in columns:
                d += varint(cid) + string(name) + string(unit)
            d += varint(len(sites))
            for site in sites:
                sid, name, function, file, line = site[:5]
                d += varint(sid) + string(name) + string(function) + string(file) + varint(line)
                if v11:
                    d += varint(site[5] if len(site) > 5 else 0) + varint(site[6] if len(site) > 6 else 0)
            d += varint(len(threads))
            for tid, name, os_tid in threads:
                d += varint(tid) + string(name) + varint(os_tid)
            if v11:
                d += varint(len(modules))
                for mid, path, build_id, load in modules:
                    d += varint(mid) + string(path) + string(build_id) + varint(load)
        if presence is not None:
            d += varint(presence)
        for v in system_values or []:
            d += svarint(v)
        values = values or {}
        d += varint(len(values))
        prev_id = len(self.system) - 1
        for cid in sorted(values):
            # 1.1: every value in full (xorf64 against +0.0; +0.0 itself is 0x80).
            if v11:
                d += varint(cid - prev_id - 1)
                d += b"\x80" if f64_bits(values[cid]) == 0 else xorf64(values[cid], 0.0)
            else:
                d += varint(cid - prev_id - 1) + xorf64(values[cid], self.prev_user.get(cid, 0.0))
            self.prev_user[cid] = values[cid]
            prev_id = cid
        if flags & FRAME_DROPS:
            d += varint(dropped if dropped is not None else sum(c for _, _, c in drops or ()))
            if v11:
                d += varint(len(drops or ()))
                for cause, tid, count in drops or ():
                    d += varint(cause) + varint(tid) + varint(count)
        if flame is not None:
            items = list(flame.items()) if isinstance(flame, dict) else list(flame)
            d += varint(len(items))
            for tid, scopes in items:
                ended = [x for x in scopes if x[0] != "open"]
                opened = [x for x in scopes if x[0] == "open"]
                d += varint(tid) + varint(len(ended))
                if v11:
                    d += varint(len(opened))
                elif opened:
                    raise ValueError("format 1.0 has no open scopes")
                prev = start
                encoded, memo = [], {}  # a million equal scopes encode once
                for scope, run in itertools.groupby(ended):
                    count = sum(1 for _ in run)
                    site, depth, s_start, s_dur = scope[:4]
                    unwound = scope[4] if len(scope) > 4 else 0
                    depth_field = (depth << 1 | unwound) if v11 else depth
                    key = (scope, s_start - prev)
                    b = memo.get(key)
                    if b is None:
                        b = memo[key] = varint(site) + varint(depth_field) + svarint(s_start - prev) + varint(s_dur)
                    encoded.append(b)
                    if count > 1:  # the rest of the run starts where its first did
                        encoded.append((varint(site) + varint(depth_field) + svarint(0) + varint(s_dur)) * (count - 1))
                    prev = s_start
                d += b"".join(encoded)
                prev = start
                for _, site, s_start in opened:
                    d += varint(site) + svarint(s_start - prev)
                    prev = s_start
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
