# py-modes.py [record_stream] - one workload for memtrace's PyTorch tests in
# the allocator mode the caller sets with PYTORCH_CUDA_ALLOC_CONF, on the
# test double of torch over the simulated CUDA (default SIMCUDA_MEM); with
# the argument "record_stream", two of its tensors are used on a side stream
# (Tensor.record_stream) before they are freed. Rules: c10/cuda/
# CUDACachingAllocator.cpp @001074d. Lines marked "# L:NAME".
#
# The workload (MiB = 1048576):
#   w 33 MiB, a 5 MiB, b 30 MiB, c 120 MiB; del a; d 4 B; del b (b used on
#   the side stream first, with record_stream); e 1 MiB; f 2 MiB; del f (f
#   used on the side stream first, with record_stream); MEMSTATS.
#
# Default (unset), and max_split_size_mb:100, which gives the same figures
# here (c is oversize but never reused; no block is refused):
#   w: a 34 MiB segment, not split; a: a 20 MiB segment, split; b: 30 MiB
#   segment; c: 120 MiB segment: allocated 34+5+30+120 = 189 MiB (the
#   allocated peak, 198180864), requested 33+5+30+120 = 188 MiB (the
#   requested peak, 197132288); del a: its segment whole again; d: a 2 MiB
#   small segment: reserved 34+20+30+120+2 = 206 MiB (the reserved peak,
#   216006656); del b; e from the small segment (split); f from the free
#   20 MiB segment (split), freed: whole again.
#   allocated_current 34+120+1 MiB + 512 = 162529792
#   requested_current 33+120+1 MiB + 4 = 161480708
#   reserved_current 216006656; inactive_split_bytes 2 MiB - 512 - 1 MiB =
#   1048064 (the small segment's rest); largest_free 30 MiB = 31457280
# record_stream (default settings): b's free_completed comes at e's malloc
#   (process_events), so the figures above are reached again, except that
#   f is still waiting at the end (free_requested only): allocated as above,
#   requested_current 161480708 + 2 MiB = 163577860, its 20 MiB segment
#   split into f (pending) and 18 MiB free: inactive_split_bytes 1048064 +
#   18874368 = 19922432; largest_free 31457280
# expandable_segments:True (one large reservation, 20 MiB pages; a small
#   one, 2 MiB pages):
#   w maps pages 0-1 (40 MiB), block 33 MiB exactly (split at >= 512 B);
#   a takes 5 of the 7 MiB left; b: the 2 MiB left plus pages 2-3 (one map
#   of 40 MiB), 30 MiB taken; c: the 12 MiB left plus pages 4-9 (120 MiB),
#   120 taken, 12 MiB left: reserved 200 MiB; allocated = requested =
#   33+5+30+120 = 188 MiB (both peaks, 197132288); d maps 2 MiB: reserved
#   202 MiB (the peak, 211812352); del b merges with a's free 5 MiB: 35 MiB;
#   e from the small page; f: best fit by growable size prefers the 35 MiB
#   block to the 12 MiB one at the mapped end, split, freed: 35 MiB again.
#   allocated_current 33+120+1 MiB + 512 = 161481216
#   requested_current 161480708; reserved_current 211812352;
#   inactive_split_bytes 0 (expandable blocks are left out);
#   largest_free 35 MiB = 36700160
import sys

import torch

MiB = 1 << 20


def memstats():
    import json
    s = torch.cuda.memory_stats()
    free = [b["size"] for seg in torch.cuda.memory._snapshot()["segments"]
            for b in seg["blocks"] if b["state"] == "inactive"]
    print("MEMSTATS " + json.dumps({
        "allocated_peak": s["allocated_bytes.all.peak"],
        "requested_peak": s["requested_bytes.all.peak"],
        "reserved_peak": s["reserved_bytes.all.peak"],
        "allocated_current": s["allocated_bytes.all.current"],
        "requested_current": s["requested_bytes.all.current"],
        "reserved_current": s["reserved_bytes.all.current"],
        "inactive_split_bytes": s["inactive_split_bytes.all.current"],
        "largest_free": max(free + [0])}), flush=True)


def main():
    rs = "record_stream" in sys.argv[1:]
    side = torch.cuda.Stream() if rs else None
    w = torch.empty(33 * MiB, dtype=torch.uint8, device="cuda")  # L:w
    a = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")  # L:a
    b = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")  # L:b
    c = torch.empty(120 * MiB, dtype=torch.uint8, device="cuda")  # L:c
    del a
    d = torch.empty(4, dtype=torch.uint8, device="cuda")  # L:d
    if rs:
        b.record_stream(side)
    del b  # L:free_b
    e = torch.empty(MiB, dtype=torch.uint8, device="cuda")  # L:e
    f = torch.empty(2 * MiB, dtype=torch.uint8, device="cuda")  # L:f
    if rs:
        f.record_stream(side)
    del f  # L:free_f
    memstats()
    return w, c, d, e


if __name__ == "__main__":
    kept = main()  # L:main
