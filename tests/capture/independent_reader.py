#!/usr/bin/env python3
"""independent_reader.py: a .vor reader written from docs/FORMAT.md alone, in Python with
python3-lz4, as a check that the specification is complete. It reads format 1.0 and 1.1,
and prints the same JSON lines as capture_dump (frames with names resolved; with --full,
drops, parents, flags, open scopes and a last line with the damage found and whether the
capture ended properly); the tests compare the two.

Usage: independent_reader.py [--full] FILE
"""
import json
import math
import struct
import sys

import lz4.block

MAGIC = b"\x89VOR\r\n\x1a\n"
MAX_RECORD = 64 * 1024 * 1024
MAX_DEPTH = 256
PARENT_NONE, PARENT_UNKNOWN = -1, -2


class Malformed(Exception):
    pass


class Bytes:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise Malformed("short record")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def f64(self):
        return struct.unpack("<d", self.take(8))[0]

    def varint(self):
        v, shift = 0, 0
        for _ in range(10):
            b = self.u8()
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                if v >> 64:
                    raise Malformed("varint over 64 bits")
                return v
            shift += 7
        raise Malformed("varint too long")

    def svarint(self):
        z = self.varint()
        return (z >> 1) ^ -(z & 1)

    def string(self):
        n = self.varint()
        if n > 65535:
            raise Malformed("string too long")
        return self.take(n).decode("utf-8", "replace")

    def xorf64(self, prev):
        h = self.u8()
        if h == 0:
            return prev
        lead, n = h >> 4, h & 15
        if n < 1 or n > 8 or lead + n > 8:
            raise Malformed("bad xorf64 header")
        trail = 8 - lead - n
        x = 0
        for i, byte in enumerate(self.take(n)):
            x |= byte << (8 * (trail + i))
        bits = struct.unpack("<Q", struct.pack("<d", prev))[0] ^ x
        return struct.unpack("<d", struct.pack("<Q", bits))[0]

    def fullf64(self):
        """A 1.1 user value: None for "unchanged", else the value."""
        h = self.data[self.pos] if self.pos < len(self.data) else None
        if h == 0x00:
            self.pos += 1
            return None
        if h == 0x80:
            self.pos += 1
            return 0.0
        return self.xorf64(0.0)


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c(b, crc=0):
    crc ^= 0xFFFFFFFF
    for byte in b:
        crc = CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def number(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def link_parents(depths, n_ended, n_open):
    """The parent rule of FORMAT.md §4.5, as it is written there."""
    parents = []
    for i in range(n_ended):
        d = depths[i]
        if d == 0:
            parents.append(PARENT_NONE)
            continue
        if d >= MAX_DEPTH:
            parents.append(PARENT_UNKNOWN)
            continue
        j = next((k for k in range(i + 1, n_ended) if depths[k] < d), None)
        if j is not None and depths[j] == d - 1:
            parents.append(j)
        elif d - 1 < n_open:
            parents.append(n_ended + d - 1)
        else:
            parents.append(PARENT_UNKNOWN)
    for k in range(n_open):
        parents.append(PARENT_NONE if k == 0 else n_ended + k - 1)
    return parents


class Capture:
    def __init__(self, data, path):
        self.data, self.path = data, path
        self.columns, self.sites, self.threads, self.modules = {}, {}, {}, {}
        self.system = []
        self.prev = None          # 1.0: (index, start, duration); 1.1: index
        self.prev_sys = []        # 1.0 delta columns
        self.present = 0          # 1.0 presence mask
        self.user = {}            # column id -> (value, index read in, known)
        self.damage = []          # [offset, length]
        self.finished = False

    def fail(self, message):
        raise SystemExit("%s: %s" % (self.path, message))

    # ---- Header (§2) ----

    def header(self):
        data = self.data
        if data[:8] != MAGIC[:min(8, len(data))] or len(data) < 16:
            self.fail("not a vor capture" if data[:8] != MAGIC[:min(8, len(data))] else "header incomplete")
        h = Bytes(data)
        h.pos = 8
        major, self.minor, body_len = h.u16(), h.u16(), h.u32()
        if major != 1:
            self.fail("format version %d.%d" % (major, self.minor))
        body_at = 16
        if self.minor >= 1:
            if len(data) < 20:
                self.fail("header incomplete")
            if crc32c(data[8:16]) != struct.unpack_from("<I", data, 16)[0]:
                self.fail("damaged header")
            body_at = 20
        if body_len > 1 << 20:
            self.fail("header too large")
        if len(data) < body_at + body_len + 4:
            self.fail("header incomplete")
        if crc32c(data[8:body_at + body_len]) != struct.unpack_from("<I", data, body_at + body_len)[0]:
            self.fail("corrupt header")
        body = Bytes(data[body_at:body_at + body_len])
        body.varint()  # flags
        body.u64()  # wall clock
        if body.varint() != 1:
            self.fail("time unit")
        body.string()
        body.string()
        body.varint()
        for i in range(body.varint()):
            cid, name, unit, enc, scale = body.varint(), body.string(), body.string(), body.u8(), body.f64()
            if cid != i or enc > (0 if self.minor >= 1 else 1):
                self.fail("malformed system column")
            self.columns[cid] = (name, unit)
            self.system.append((enc, scale))
        self.S = len(self.system)
        self.prev_sys = [0] * self.S
        self.present = (1 << self.S) - 1
        return body_at + body_len + 4

    # ---- Records (§3) ----

    def head_size(self, q):
        """n if the head at q holds (§3.1), else None."""
        d = self.data
        if q + 10 > len(d):
            return None
        field = struct.unpack_from("<I", d, q)[0]
        n = field & 0x7FFFFFFF
        if n < 1 or n > MAX_RECORD or crc32c(d[q:q + 4]) & 0xFFFF != struct.unpack_from("<H", d, q + 4)[0]:
            return None
        return n

    def intact(self, q):
        n = self.head_size(q)
        if n is None or q + 10 + n > len(self.data):
            return False
        d = self.data
        return crc32c(d[q + 10:q + 10 + n], crc32c(d[q:q + 6])) == struct.unpack_from("<I", d, q + 6)[0]

    def next_intact(self, p):
        for q in range(p + 1, len(self.data) - 9):
            if self.intact(q):
                return q
        return None

    def records_1_1(self, pos):
        d = self.data
        while True:
            if pos + 10 > len(d):
                return  # nothing more yet
            n = self.head_size(pos)
            if n is not None and pos + 10 + n > len(d):
                q = self.next_intact(pos)
                if q is None:
                    return  # torn tail
                self.damage.append([pos, q - pos])
                pos = q
                continue
            if n is None or not self.intact(pos):
                q = self.next_intact(pos)
                self.damage.append([pos, (q if q is not None else len(d)) - pos])
                if q is None:
                    return
                pos = q
                continue
            field = struct.unpack_from("<I", d, pos)[0]
            body = d[pos + 10:pos + 10 + n]
            try:
                if field & 0x80000000:
                    b = Bytes(body)
                    size = b.varint()
                    if size < 1 or size > MAX_RECORD:
                        raise Malformed("decoded size")
                    try:
                        raw = lz4.block.decompress(body[b.pos:], uncompressed_size=size)
                    except lz4.block.LZ4BlockError:
                        raise Malformed("LZ4")
                    if len(raw) != size:
                        raise Malformed("LZ4")
                else:
                    raw = body
                frame = self.record(raw)
            except Malformed:
                self.damage.append([pos, 10 + n])
                frame = None
            pos += 10 + n
            if frame is not None:
                yield frame
            if self.finished:
                return

    def records_1_0(self, pos):
        d, history = self.data, b""
        while pos + 4 <= len(d):
            length = struct.unpack_from("<I", d, pos)[0]
            if length < 6 or length > MAX_RECORD:
                self.fail("corrupt record at byte %d" % pos)
            if pos + 4 + length > len(d):
                return  # torn tail
            if crc32c(d[pos + 8:pos + 4 + length], crc32c(d[pos:pos + 4])) != struct.unpack_from("<I", d, pos + 4)[0]:
                self.fail("corrupt record at byte %d" % pos)
            rec = Bytes(d[pos + 8:pos + 4 + length])
            h = rec.varint()
            size, stored = h >> 1, h & 1
            payload = rec.data[rec.pos:]
            raw = payload if stored else lz4.block.decompress(payload, uncompressed_size=size, dict=history[-65536:])
            if len(raw) != size:
                self.fail("corrupt record at byte %d" % pos)
            history = (history + raw)[-65536:]
            try:
                frame = self.record(raw)
            except Malformed as e:
                self.fail("corrupt record at byte %d: %s" % (pos, e))
            pos += 4 + length
            if frame is not None:
                yield frame
            if self.finished:
                return

    # ---- Frame records (§4) ----

    def record(self, raw):
        r = Bytes(raw)
        kind = r.u8()
        if kind == 2:
            self.finished = True
        if kind == 3 and self.minor >= 1:
            self.state(r)
        if kind != 1:
            return None
        v11 = self.minor >= 1
        flags = r.varint()
        if v11:
            index, start = r.varint(), r.varint()
            if self.prev is not None and index <= self.prev:
                raise Malformed("index")
        else:
            exp_index = self.prev[0] + 1 if self.prev else 0
            exp_start = self.prev[1] + self.prev[2] if self.prev else 0
            index = exp_index + r.varint()
            start = exp_start + r.svarint()
        duration, overhead = r.varint(), r.varint()
        if not -(1 << 63) <= start < 1 << 63 or duration >= 1 << 63 or overhead >= 1 << 63 \
                or start + duration >= 1 << 63 or index >= 1 << 64:
            raise Malformed("times")
        if flags & 1:
            self.declarations(r, v11)
        present = (1 << self.S) - 1 if v11 else self.present
        if flags & 2:
            present = r.varint()
            if present >> self.S:
                raise Malformed("presence")
        values, units = {}, {}

        def put(cid, v):
            name, unit = self.columns[cid]
            values[name] = number(v)
            units[name] = unit

        if present & 1:
            put(0, duration * self.system[0][1])
        for c in range(1, self.S):
            if present >> c & 1:
                v = r.svarint()
                if self.system[c][0] == 1:
                    v += self.prev_sys[c]
                    self.prev_sys[c] = v
                put(c, v * self.system[c][1])
        cid = self.S - 1
        for _ in range(r.varint()):
            cid += r.varint() + 1
            if cid >= 4096:
                raise Malformed("column id")
            if cid not in self.columns:
                if not v11:
                    raise Malformed("undeclared column")
                self.columns[cid] = ("column %d" % cid, "")
            last, read_in, known = self.user.get(cid, (0.0, 0, False))
            if v11:
                v = r.fullf64()
                if v is None:
                    v, known = last, known and index - read_in <= 2
                else:
                    known = True
            else:
                v, known = r.xorf64(last), True
            self.user[cid] = (v, index, known)
            if known:
                put(cid, v)
        dropped, drops = 0, []
        if flags & 4:
            dropped = r.varint()
            if v11:
                for _ in range(r.varint()):
                    drop = [r.varint(), r.varint(), r.varint()]
                    if drop[0] >= 1 << 32 or drop[1] >= 1 << 32:
                        raise Malformed("drop")
                    drops.append(drop)
        scopes = []
        if flags & 8:
            scopes = self.flame(r, v11, start, start + duration)
        if v11:
            self.prev = index
        else:
            self.prev = (index, start, duration)
            self.present = present
        return {"index": index, "start": start, "duration": duration, "overhead": overhead, "dropped": dropped,
                "values": values, "units": units, "drops": drops, "scopes": scopes}

    def state(self, r):
        """A state record (§4.8): declarations, then user values with the frame each was read in."""
        flags = r.varint()
        r.varint()  # the frame the state precedes
        if flags & 1:
            self.declarations(r, True)
        if flags & 2:
            cid = self.S - 1
            for _ in range(r.varint()):
                cid += r.varint() + 1
                if cid >= 4096:
                    raise Malformed("column id")
                v = r.fullf64()
                read_in = r.varint()
                if v is None:
                    raise Malformed("state value")
                if cid not in self.columns:
                    self.columns[cid] = ("column %d" % cid, "")
                self.user[cid] = (v, read_in, True)

    def declarations(self, r, v11):
        for _ in range(r.varint()):
            cid, name, unit = r.varint(), r.string(), r.string()
            if cid < self.S or cid >= 4096:
                raise Malformed("column id")
            self.columns[cid] = (name, unit)
        for _ in range(r.varint()):
            sid, name, _func, file, line = r.varint(), r.string(), r.string(), r.string(), r.varint()
            if v11:
                module, _address = r.varint(), r.varint()
                if module > 65535:
                    raise Malformed("module id")
            if sid < 1 or sid > 1 << 20:
                raise Malformed("site id")
            self.sites[sid] = (name, file, line)
        for _ in range(r.varint()):
            tid, name, _os = r.varint(), r.string(), r.varint()
            if tid >= 1 << 32 or (tid not in self.threads and len(self.threads) >= 65536):
                raise Malformed("thread id")
            self.threads[tid] = name
        if v11:
            for _ in range(r.varint()):
                mid, path, build_id, load = r.varint(), r.string(), r.string(), r.varint()
                if mid < 1 or mid > 65535:
                    raise Malformed("module id")
                self.modules[mid] = (path, build_id, load)

    def flame(self, r, v11, frame_start, frame_end):
        out = []
        for _ in range(r.varint()):
            tid, n = r.varint(), r.varint()
            n_open = r.varint() if v11 else 0
            if tid >= 1 << 32 or n_open > 256:
                raise Malformed("flame")
            rows, prev = [], frame_start
            for _ in range(n):
                sid, depth = r.varint(), r.varint()
                unwound = 0
                if v11:
                    unwound, depth = depth & 1, depth >> 1
                s_start = prev + r.svarint()
                dur = r.varint()
                if sid >= 1 << 32 or depth >= 1 << 32 or dur >= 1 << 63 or not -(1 << 63) <= s_start < 1 << 63 \
                        or s_start + dur >= 1 << 63:
                    raise Malformed("scope")
                prev = s_start
                rows.append([sid, depth, s_start, dur, 2 if unwound else 0])
            prev = frame_start
            for k in range(n_open):
                sid = r.varint()
                s_start = prev + r.svarint()
                if sid >= 1 << 32 or not -(1 << 63) <= s_start < 1 << 63:
                    raise Malformed("open scope")
                prev = s_start
                rows.append([sid, k, s_start, max(0, frame_end - s_start), 1])
            parents = link_parents([row[1] for row in rows], n, n_open)
            thread = self.threads.get(tid, "thread %d" % tid)
            for row, parent in zip(rows, parents):
                sid, depth, s_start, dur, fl = row
                name, file, line = self.sites.get(sid, ("site %d" % sid, "", 0))
                out.append([thread, name, depth, s_start, dur, file, line, parent, fl])
        return out


def read(path, full):
    data = open(path, "rb").read()
    cap = Capture(data, path)
    pos = cap.header()
    records = cap.records_1_1(pos) if cap.minor >= 1 else cap.records_1_0(pos)
    for frame in records:
        if not full:
            del frame["drops"]
            frame["scopes"] = [s[:7] for s in frame["scopes"] if not s[8] & 1]
        print(json.dumps(frame))
    if full:
        print(json.dumps({"end": {"finished": cap.finished, "damage": cap.damage}}))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--full":
        read(sys.argv[2], True)
    elif len(sys.argv) == 2:
        read(sys.argv[1], False)
    else:
        raise SystemExit("usage: independent_reader.py [--full] FILE")
