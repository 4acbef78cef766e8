# py-steps-fixed.py [STEPS] - py-steps.py with its leak fixed, line for line (lines marked L:fix): no tensor left at exit
# run on the test double of torch (tests/torchdouble first on PYTHONPATH)
# over the simulated CUDA, whose default SIMCUDA_MEM will do. Lines the
# tests look for carry a "# L:NAME" marker; find their numbers with grep.
#
# What it does, STEPS (default 4) times after allocating the weights:
#   weights   12 MiB, its own 12 MiB segment (line marked L:weights)
#   each step three activations of 3 MiB (one 20 MiB segment, reused every
#             step), then one 1 MiB tensor appended to `history` (the leak:
#             two per 2 MiB small segment), then the activations freed
# Figures with the default 4 steps (MiB = 1048576 bytes):
#   allocated peak 25 MiB (12 + 9 + 4), at the last step's history append;
#     there reserved is 36 MiB (12 + 20 + 2 * 2), cached 11 MiB, all of it
#     inactive split (the free rest of the 20 MiB segment), largest free
#     block 11 MiB
#   reserved peak 36 MiB; at exit allocated 16 MiB (weights and 4 history
#     tensors: the leak, 1 MiB a step from the line marked L:leak), cached
#     20 MiB, inactive split 0
#   segments: 12 MiB, 20 MiB, then one 2 MiB small segment every 2 steps;
#     no segment is ever freed
# For STEPS = n: allocated peak (21 + n) MiB, reserved peak
# (32 + 2 * ceil(n / 2)) MiB.
# Prints, from torch.cuda's own figures:
#   allocated_peak=N reserved_peak=N
#   allocated=N reserved=N inactive_split=N
import sys

import torch

MiB = 1 << 20
history = []


def step(i):
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")  # L:act_x
    h = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")  # L:act_h
    y = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")  # L:act_y
    history.append(torch.empty(MiB, dtype=torch.uint8, device="cuda"))  # L:leak
    del x, h, y  # L:free_act


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    weights = torch.empty(12 * MiB, dtype=torch.uint8, device="cuda")  # L:weights
    for i in range(steps):
        step(i)  # L:step
    history.clear()  # L:fix
    print("allocated_peak=%d reserved_peak=%d" % (torch.cuda.max_memory_allocated(),
                                                  torch.cuda.max_memory_reserved()))
    stats = torch.cuda.memory_stats()
    print("allocated=%d reserved=%d inactive_split=%d" % (
        stats["allocated_bytes.all.current"], stats["reserved_bytes.all.current"],
        stats["inactive_split_bytes.all.current"]))
    return None  # L:fix


if __name__ == "__main__":
    kept = main()  # L:main
