# py-odd.py - odd sizes for memtrace's PyTorch tests, on the test double of
# torch (tests/torchdouble first on PYTHONPATH) over the simulated CUDA
# (default SIMCUDA_MEM). Sizes are not 512-byte multiples and one large
# block is not split, so PyTorch's allocated_bytes (block sizes) and
# requested_bytes (the sizes asked) differ. Rules: c10/cuda/
# CUDACachingAllocator.cpp @001074d (round_size, get_allocation_size,
# should_split). Lines the tests look for carry "# L:NAME".
#
#   bias      three float32 scalars (4 B each): 512 B blocks of one 2 MiB
#             small segment (split each time)
#   weight    33 MiB: a 34 MiB segment (get_allocation_size rounds to
#             2 MiB), NOT split (1 MiB left is not > 1 MiB): a 34 MiB block
#   small     5000 B: 5120 B, from the small segment
#   act       3 MiB + 1: 3146240 B, from a new 20 MiB segment (split)
#   peak      (after act) allocated 1536 + 35651584 + 5120 + 3146240 = 38804480
#             requested 12 + 34603008 + 5000 + 3145729 = 37753749
#             reserved 2 + 34 + 20 MiB = 58720256
#   then act and small are freed: the 20 MiB segment is whole again (not
#   inactive split), the small one keeps the biases
# MEMSTATS at the end (from memory_stats() and the snapshot):
#   allocated_peak 38804480, requested_peak 37753749, reserved_peak 58720256,
#   allocated_current 1536 + 35651584 = 35653120,
#   requested_current 12 + 34603008 = 34603020, reserved_current 58720256,
#   inactive_split_bytes 2097152 - 1536 = 2095616,
#   largest_free 20971520 (the whole 20 MiB segment)
import json

import torch

MiB = 1 << 20


def memstats():
    """The MEMSTATS line: PyTorch's own counters, for comparing with a report."""
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
    bias = [torch.empty(1, dtype=torch.float32, device="cuda") for _ in range(3)]  # L:bias
    weight = torch.empty(33 * MiB, dtype=torch.uint8, device="cuda")  # L:weight
    small = torch.empty(5000, dtype=torch.uint8, device="cuda")  # L:small
    act = torch.empty(3 * MiB + 1, dtype=torch.uint8, device="cuda")  # L:act
    del act, small  # L:free
    memstats()
    return bias, weight


if __name__ == "__main__":
    kept = main()  # L:main
