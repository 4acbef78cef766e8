#!/usr/bin/env python3
# check-torch-snapshot.py - reads a torch.cuda.memory._snapshot() pickle the
# way PyTorch's torch/cuda/_memory_viz.py reads it (pytorch/pytorch
# 0044eb6704e63eec2a52110f4b1a44331e3d4342: segsum(), trace(),
# _write_blocks(), _block_extra(), _frames_fmt()) and checks the layout of
# the TypedDicts of torch/cuda/memory.py (_Segment, _Block, _Frame,
# _TraceEntry, _Snapshot); with torch installed, also runs _memory_viz's own
# segsum, trace and memory on it. An expandable segment's pages come and go
# with segment_map / segment_unmap entries (MemoryViz.js's reading): the
# replay keeps mapped ranges and refuses an unmap of what is not mapped.
# Prints one line of figures:
#   segments=N blocks=N active_blocks=N active_bytes=N entries=N live_at_end=N
# Exit status 1 and a message on the first problem.
import pickle
import sys

STATES = {"active_allocated", "active_pending_free", "inactive"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "snapshot", "oom"}


def fail(msg):
    print("check-torch-snapshot: " + msg, file=sys.stderr)
    sys.exit(1)


def need(d, key, typ, where):
    if not isinstance(d, dict) or key not in d:
        fail(f"{where}: no '{key}'")
    v = d[key]
    if typ is int and (not isinstance(v, int) or isinstance(v, bool)):
        fail(f"{where}: '{key}' is {type(v).__name__}, not int")
    if not isinstance(v, typ):
        fail(f"{where}: '{key}' is {type(v).__name__}, not {typ.__name__}")
    return v


def frames(fr, where):
    if not isinstance(fr, list):
        fail(f"{where}: frames is not a list")
    for i, f in enumerate(fr):
        need(f, "filename", str, f"{where} frame {i}")
        need(f, "line", int, f"{where} frame {i}")
        need(f, "name", str, f"{where} frame {i}")
        # _frame_fmt / _frame_filter
        f"{f['filename'].split('/')[-1]}:{f['line']}:{f['name']}"


def main():
    if len(sys.argv) != 2:
        fail("usage: check-torch-snapshot.py FILE.pickle")
    with open(sys.argv[1], "rb") as fh:
        data = pickle.load(fh)
    if not isinstance(data, dict):
        fail("the snapshot is not a dict")
    segs = need(data, "segments", list, "snapshot")
    traces = data.get("device_traces", [])
    if not isinstance(traces, list) or any(not isinstance(t, list) for t in traces):
        fail("device_traces is not a list of lists")
    if "allocator_settings" in data and not isinstance(data["allocator_settings"], dict):
        fail("allocator_settings is not a dict")

    nblocks = nactive = active_bytes = 0
    live_blocks = {}
    for si, seg in enumerate(segs):
        w = f"segment {si}"
        dev = need(seg, "device", int, w)
        addr = need(seg, "address", int, w)
        total = need(seg, "total_size", int, w)
        need(seg, "stream", int, w)
        if need(seg, "segment_type", str, w) not in ("small", "large"):
            fail(f"{w}: segment_type {seg['segment_type']!r}")
        alloc = need(seg, "allocated_size", int, w)
        active = need(seg, "active_size", int, w)
        requested = need(seg, "requested_size", int, w)
        blocks = need(seg, "blocks", list, w)
        # segsum(): the blocks tile the segment from its address
        boffset = 0
        free_ext = free_int = seg_alloc = 0
        held = held_active = held_req = 0
        for bi, b in enumerate(blocks):
            wb = f"{w} block {bi}"
            size = need(b, "size", int, wb)
            baddr = need(b, "address", int, wb)
            state = need(b, "state", str, wb)
            if state not in STATES:
                fail(f"{wb}: state {state!r}")
            if baddr != addr + boffset:
                fail(f"{wb}: address {baddr} is not the segment's {addr} + {boffset}")
            fr = need(b, "frames", list, wb)        # _block_extra()
            req = need(b, "requested_size", int, wb)
            frames(fr, wb)
            if state == "active_allocated":
                seg_alloc += req
                free_int += size - req
                nactive += 1
                active_bytes += size
                live_blocks[(dev, baddr)] = size
            else:
                free_ext += size
            if state == "active_allocated":
                held += size
            if state != "inactive":
                held_active += size
                held_req += req
                if req > size:
                    fail(f"{wb}: requested_size {req} over its size {size}")
            if state == "active_pending_free":
                live_blocks[(dev, baddr)] = size
            boffset += size
            nblocks += 1
        if free_ext + free_int + seg_alloc != total:     # segsum()'s assertion
            fail(f"{w}: blocks sum to {free_ext + free_int + seg_alloc}, total_size {total}")
        # PyTorch's segment info: allocated_size counts the allocated
        # blocks, active_size those and the ones awaiting their free,
        # requested_size the active blocks' requests
        if alloc != held:
            fail(f"{w}: allocated_size {alloc}, its active_allocated blocks {held}")
        if active != held_active:
            fail(f"{w}: active_size {active}, its active blocks {held_active}")
        if requested != held_req:
            fail(f"{w}: requested_size {requested}, its active blocks request {held_req}")

    # trace(): replay each device's entries
    nentries = 0
    live_end = 0
    for d, entries in enumerate(traces):
        allocs, segments, mapped = {}, {}, []
        for i, e in enumerate(entries):
            w = f"device {d} entry {i}"
            act = need(e, "action", str, w)
            if act not in ACTIONS:
                fail(f"{w}: action {act!r}")
            size = need(e, "size", int, w)
            frames(e.get("frames", []), w)
            if act == "oom":
                need(e, "device_free", int, w)
                continue
            addr = need(e, "addr", int, w)
            if act == "segment_alloc":
                segments[addr] = size
            elif act == "segment_free":
                if segments.pop(addr, None) != size:
                    fail(f"{w}: segment_free of {addr} ({size}) with no such segment")
            elif act == "segment_map":
                if any(s < addr + size and addr < s + n for s, n in mapped):
                    fail(f"{w}: segment_map of {addr} ({size}) over a mapped range")
                mapped.append((addr, size))
            elif act == "segment_unmap":
                inside = [(s, n) for s, n in mapped if s < addr + size and addr < s + n]
                if sum(min(s + n, addr + size) - max(s, addr) for s, n in inside) != size:
                    fail(f"{w}: segment_unmap of {addr} ({size}) not all mapped")
                mapped = [r for r in mapped if r not in inside]
                for s, n in inside:
                    if s < addr:
                        mapped.append((s, addr - s))
                    if s + n > addr + size:
                        mapped.append((addr + size, s + n - addr - size))
            elif act == "alloc":
                if not any(s <= addr < s + n for s, n in list(segments.items()) + mapped):
                    fail(f"{w}: alloc at {addr} outside every live segment")
                allocs[addr] = [size, False]
            elif act == "free_requested":
                if addr not in allocs or allocs[addr][0] != size:
                    fail(f"{w}: free_requested of {addr} ({size}) not allocated")
                allocs[addr][1] = True
            elif act == "free_completed":
                if allocs.pop(addr, [None])[0] != size:
                    fail(f"{w}: free_completed of {addr} ({size}) not allocated")
        nentries += len(entries)
        # what the trace leaves live is what the segments hold
        want = {a: n for (dd, a), n in live_blocks.items() if dd == d}
        got = {a: v[0] for a, v in allocs.items()}
        if entries and got != want:
            fail(f"device {d}: the trace leaves {len(got)} allocations live, "
                 f"the segments hold {len(want)} blocks")
        live_end += len(got)

    try:
        import torch.cuda._memory_viz as mv
    except Exception:
        mv = None
    if mv is not None:
        mv.segsum(data)
        mv.trace(data)
        mv.memory(data, format_flamegraph=lambda x: x)
        mv.segments(data, format_flamegraph=lambda x: x)
    # memory()/segments() hand their lines to flamegraph.pl, which fails on
    # none: a snapshot with segments but no block draws nothing
    if segs and not nblocks:
        fail("segments without blocks: memory_viz's flame graphs have nothing to draw")
    print(f"segments={len(segs)} blocks={nblocks} active_blocks={nactive} "
          f"active_bytes={active_bytes} entries={nentries} live_at_end={live_end}")


main()
