#!/usr/bin/env python3
"""independent_reader.py: a .vor reader written from docs/FORMAT.md alone, in Python with
python3-lz4, as a check that the specification is complete. It prints the same JSON
lines as capture_dump (frames with names resolved); check_independent_reader.py compares.

Usage: independent_reader.py FILE
"""
import json
import math
import struct
import sys

import lz4.block

MAGIC = b"\x89VOR\r\n\x1a\n"


class Bytes:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def u8(self):
        b = self.data[self.pos]
        self.pos += 1
        return b

    def u16(self):
        v = struct.unpack_from("<H", self.data, self.pos)[0]
        self.pos += 2
        return v

    def u32(self):
        v = struct.unpack_from("<I", self.data, self.pos)[0]
        self.pos += 4
        return v

    def u64(self):
        v = struct.unpack_from("<Q", self.data, self.pos)[0]
        self.pos += 8
        return v

    def f64(self):
        v = struct.unpack_from("<d", self.data, self.pos)[0]
        self.pos += 8
        return v

    def varint(self):
        v, shift = 0, 0
        while True:
            b = self.u8()
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def svarint(self):
        z = self.varint()
        return (z >> 1) ^ -(z & 1)

    def string(self):
        n = self.varint()
        s = self.data[self.pos:self.pos + n]
        if len(s) != n:
            raise ValueError("short string")
        self.pos += n
        return s.decode("utf-8", "replace")

    def xorf64(self, prev):
        h = self.u8()
        if h == 0:
            return prev
        lead, n = h >> 4, h & 15
        if n < 1 or n > 8 or lead + n > 8:
            raise ValueError("bad xorf64 header")
        trail = 8 - lead - n
        x = 0
        for i in range(n):
            x |= self.u8() << (8 * (trail + i))
        bits = struct.unpack("<Q", struct.pack("<d", prev))[0] ^ x
        return struct.unpack("<d", struct.pack("<Q", bits))[0]


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


def read(path):
    data = open(path, "rb").read()
    if data[:8] != MAGIC:
        raise SystemExit("%s: not a vor capture" % path)
    head = Bytes(data)
    head.pos = 8
    major, minor, body_len = head.u16(), head.u16(), head.u32()
    if major != 1:
        raise SystemExit("%s: format version %d.%d" % (path, major, minor))
    if len(data) < 16 + body_len + 4:
        raise SystemExit("%s: header incomplete" % path)
    if crc32c(data[8:16 + body_len]) != struct.unpack_from("<I", data, 16 + body_len)[0]:
        raise SystemExit("%s: corrupt header" % path)
    body = Bytes(data[16:16 + body_len])
    body.varint()  # flags
    body.u64()  # wall clock
    assert body.varint() == 1  # time unit
    body.string()
    body.string()
    body.varint()
    columns, system = {}, []
    for i in range(body.varint()):
        cid, name, unit, enc, scale = body.varint(), body.string(), body.string(), body.u8(), body.f64()
        assert cid == i
        columns[cid] = (name, unit)
        system.append((enc, scale))
    S = len(system)
    sites, threads = {}, {}
    prev_sys = [0] * S
    prev_user = {}
    present = (1 << S) - 1
    prev = None  # (index, start, duration)
    history = b""
    pos = 16 + body_len + 4
    while pos + 4 <= len(data):
        length = struct.unpack_from("<I", data, pos)[0]
        if pos + 4 + length > len(data):
            break  # torn tail
        check = struct.unpack_from("<I", data, pos + 4)[0]
        if crc32c(data[pos + 8:pos + 4 + length], crc32c(data[pos:pos + 4])) != check:
            raise SystemExit("%s: corrupt record at byte %d" % (path, pos))
        rec = Bytes(data[pos + 8:pos + 4 + length])
        h = rec.varint()
        size, stored = h >> 1, h & 1
        payload = rec.data[rec.pos:]
        if stored:
            raw = payload
        else:
            raw = lz4.block.decompress(payload, uncompressed_size=size, dict=history[-65536:])
        if len(raw) != size:
            raise SystemExit("%s: corrupt record at byte %d" % (path, pos))
        history = (history + raw)[-65536:]
        pos += 4 + length
        r = Bytes(raw)
        kind = r.u8()
        if kind != 1:
            continue
        flags = r.varint()
        exp_index = prev[0] + 1 if prev else 0
        exp_start = prev[1] + prev[2] if prev else 0
        index = exp_index + r.varint()
        start = exp_start + r.svarint()
        duration, overhead = r.varint(), r.varint()
        if flags & 1:
            for _ in range(r.varint()):
                cid, name, unit = r.varint(), r.string(), r.string()
                columns[cid] = (name, unit)
            for _ in range(r.varint()):
                sid, name, func, file, line = r.varint(), r.string(), r.string(), r.string(), r.varint()
                sites[sid] = (name, func, file, line)
            for _ in range(r.varint()):
                tid, name, _os = r.varint(), r.string(), r.varint()
                threads[tid] = name
        if flags & 2:
            present = r.varint()
        values, units = {}, {}
        if present & 1:
            values[columns[0][0]] = duration * system[0][1]
            units[columns[0][0]] = columns[0][1]
        for c in range(1, S):
            if present >> c & 1:
                v = r.svarint()
                if system[c][0] == 1:
                    v += prev_sys[c]
                prev_sys[c] = v
                values[columns[c][0]] = v * system[c][1]
                units[columns[c][0]] = columns[c][1]
        cid = S - 1
        for _ in range(r.varint()):
            cid += r.varint() + 1
            v = r.xorf64(prev_user.get(cid, 0.0))
            prev_user[cid] = v
            values[columns[cid][0]] = v
            units[columns[cid][0]] = columns[cid][1]
        dropped = r.varint() if flags & 4 else 0
        scopes = []
        if flags & 8:
            for _ in range(r.varint()):
                tid, n = r.varint(), r.varint()
                s_prev = start
                for _ in range(n):
                    sid, depth = r.varint(), r.varint()
                    s_start = s_prev + r.svarint()
                    dur = r.varint()
                    s_prev = s_start
                    name, _func, file, line = sites[sid]
                    scopes.append([threads[tid], name, depth, s_start, dur, file, line])
        prev = (index, start, duration)
        print(json.dumps({"index": index, "start": start, "duration": duration, "overhead": overhead,
                          "dropped": dropped, "values": {k: number(v) for k, v in values.items()},
                          "units": units, "scopes": scopes}))


if __name__ == "__main__":
    read(sys.argv[1])
