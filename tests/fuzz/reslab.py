#!/usr/bin/env python3
"""reslab.py IN OUT [SLAB] - rewrite a memtrace trace with a smaller slab
size (default 4096), keeping every record, its thread and its time: how the
seeds of tests/fuzz/corpus/ are made from real traces, small enough for the
fuzzer to mutate. Records are copied byte for byte; a slab that fills up
continues in a new slab of the same thread with the time base of the record
that did not fit (a timebase record first, so times stay exact)."""
import struct, sys

def records(data):
    hs, ss = struct.unpack_from('<II', data, 12)
    off = hs
    while off + 16 <= len(data):
        magic, tid, base = struct.unpack_from('<IIQ', data, off)
        if magic == 0x424c534d:
            pos, end = off + 16, min(off + ss, len(data))
            while pos + 4 <= end:
                typ, size8 = data[pos], data[pos + 1]
                if data[pos:pos + 4] == b'\0\0\0\0':
                    break
                size = size8 * 8 if size8 else struct.unpack_from('<I', data, pos + 4)[0]
                rec = data[pos:pos + size]
                if typ == 10:
                    base = struct.unpack_from('<Q', rec, 8)[0]
                yield tid, base, rec
                pos += size
        off += ss

def main():
    src, dst = sys.argv[1], sys.argv[2]
    slab = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    data = open(src, 'rb').read()
    hdr = bytearray(data[:64])
    struct.pack_into('<II', hdr, 12, slab, slab)
    out = bytearray(hdr) + bytes(slab - 64)
    cur = {}     # tid -> [offset of its slab, fill, base]
    for tid, base, rec in records(data):
        s = cur.get(tid)
        rebase = s is not None and s[2] != base and rec[0] != 10
        if s is None or s[1] + len(rec) + 16 * rebase > slab:
            s = [len(out), 16, base]
            out += struct.pack('<IIQ', 0x424c534d, tid, base) + bytes(slab - 16)
            cur[tid] = s
        elif rebase:
            out[s[0] + s[1]:s[0] + s[1] + 16] = struct.pack('<BBBBIQ', 10, 2, 0, 0, 0, base)
            s[1] += 16
        s[2] = base
        out[s[0] + s[1]:s[0] + s[1] + len(rec)] = rec
        s[1] += len(rec)
    open(dst, 'wb').write(out)

main()
