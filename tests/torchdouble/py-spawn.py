# py-spawn.py - a parent and a worker started with multiprocessing's spawn
# method (as a DataLoader worker or a torchrun rank is), both allocating
# tensors, for memtrace's PyTorch tests; run on the test double of torch
# (tests/torchdouble first on PYTHONPATH, which the spawned worker inherits)
# over the simulated CUDA, whose default SIMCUDA_MEM will do (each process
# has a simulated device of its own). Lines the tests look for carry
# "# L:NAME". The spawn method also starts multiprocessing's resource
# tracker, a third Python process that makes no CUDA call.
#
#   parent    4 MiB (# L:parent_alloc, one 20 MiB segment) before starting
#             the worker, freed after joining it (# L:parent_free)
#   worker    6 MiB (# L:worker_alloc, one 20 MiB segment) and 512 KiB
#             (# L:worker_small, one 2 MiB small segment), frees the 6 MiB
#             tensor (# L:worker_free) and exits with the 512 KiB one alive
# Figures (bytes):
#   parent  allocated peak 4194304, reserved peak 20971520, allocated at
#           exit 0
#   worker  allocated peak 6815744, reserved peak 23068672, allocated at
#           exit 524288 (a tensor leak candidate)
# Prints one line per process, the worker's first:
#   worker pid=N allocated_peak=6815744 reserved_peak=23068672
#   parent pid=N allocated_peak=4194304 reserved_peak=20971520
import multiprocessing
import os

import torch

MiB = 1 << 20
kept = []


def figures(who):
    print("%s pid=%d allocated_peak=%d reserved_peak=%d" % (
        who, os.getpid(), torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()),
        flush=True)


def worker():
    a = torch.empty(6 * MiB, dtype=torch.uint8, device="cuda")  # L:worker_alloc
    kept.append(torch.empty(MiB // 2, dtype=torch.uint8, device="cuda"))  # L:worker_small
    del a  # L:worker_free
    figures("worker")


def main():
    p = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")  # L:parent_alloc
    ctx = multiprocessing.get_context("spawn")
    w = ctx.Process(target=worker)
    w.start()
    w.join()
    if w.exitcode != 0:
        raise SystemExit("py-spawn.py: the worker exited %d" % w.exitcode)
    del p  # L:parent_free
    figures("parent")


if __name__ == "__main__":
    main()
