# py-figures.py [--record-stream] [--own-history N] [--steps N] [--sleep MS] - a
# training-like loop of odd-sized tensors for memtrace's comparison of its
# framework figures with PyTorch's own counters (t723), run on the torch
# double (tests/torchdouble first on PYTHONPATH) in whatever allocator mode
# PYTORCH_CUDA_ALLOC_CONF sets. Each step: 4-byte scalars, a 1000-byte
# bias, activations of 3 MiB + 1, 5 MiB + 3 and 33 MiB (the last two taken
# from blocks not split), a tensor kept per step (1 MiB - 100: the small
# pool), the activations freed. --record-stream: each step's 5 MiB + 3
# tensor is used on a side stream, so its free completes only at a later
# malloc. --own-history N: the program calls _record_memory_history itself
# with max_entries=N after the weights, as trainers do. --sleep MS: a pause
# after each step, so periodic drains fall between steps. Prints PyTorch's
# own counters at the end as one line:
#   MEMSTATS {"allocated_peak": .., "requested_peak": .., "reserved_peak": ..,
#             "allocated": .., "requested": .., "reserved": ..,
#             "inactive_split": ..}
import json
import sys
import time

import torch

MiB = 1 << 20
kept = []


def step(i, side):
    s = [torch.empty(4, dtype=torch.uint8, device="cuda") for _ in range(3)]
    bias = torch.empty(1000, dtype=torch.uint8, device="cuda")
    a = torch.empty(3 * MiB + 1, dtype=torch.uint8, device="cuda")
    b = torch.empty(5 * MiB + 3, dtype=torch.uint8, device="cuda")
    if side is not None:
        b.record_stream(side)
    c = torch.empty(33 * MiB, dtype=torch.uint8, device="cuda")
    kept.append(torch.empty(MiB - 100, dtype=torch.uint8, device="cuda"))
    del s, bias, a, b, c


def main():
    args = sys.argv[1:]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 6
    side = torch.cuda.Stream() if "--record-stream" in args else None
    weights = torch.empty(12 * MiB + 7, dtype=torch.uint8, device="cuda")
    if "--own-history" in args:
        n = int(args[args.index("--own-history") + 1])
        torch.cuda.memory._record_memory_history(max_entries=n)
    pause = float(args[args.index("--sleep") + 1]) / 1000 if "--sleep" in args else 0
    for i in range(steps):
        step(i, side)
        if pause:
            time.sleep(pause)
    torch.cuda.synchronize()
    st = torch.cuda.memory_stats()
    print("MEMSTATS " + json.dumps({
        "allocated_peak": st["allocated_bytes.all.peak"],
        "requested_peak": st["requested_bytes.all.peak"],
        "reserved_peak": st["reserved_bytes.all.peak"],
        "allocated": st["allocated_bytes.all.current"],
        "requested": st["requested_bytes.all.current"],
        "reserved": st["reserved_bytes.all.current"],
        "inactive_split": st["inactive_split_bytes.all.current"]}, sort_keys=True))
    return weights


if __name__ == "__main__":
    w = main()
