# py-oom.py - an out-of-memory error with enough memory cached, but in
# pieces, for memtrace's PyTorch tests; run on the test double of torch
# (tests/torchdouble first on PYTHONPATH) over the simulated CUDA with
# SIMCUDA_MEM=380M and the default context overhead (300M), which leaves
# 80 MiB for the allocator. Lines the tests look for carry "# L:NAME".
#
#   fill      16 tensors of 5 MiB: four 20 MiB segments, each tiled by four
#             5 MiB blocks; the device is then full (0 bytes free)
#   free      every other tensor (8): each segment keeps 2 blocks of 5 MiB
#             allocated and 2 free ones between them, so allocated 40 MiB,
#             reserved 80 MiB, cached 40 MiB, all inactive split, in 8
#             pieces of 5 MiB (the largest free block)
#   ask       8 MiB (# L:oom): no free block fits, cudaMalloc of a 20 MiB
#             segment fails, no cached segment is whole so none is freed,
#             the retry fails (num_alloc_retries 1), "oom" with size
#             8388608 and device_free 0, the observer (if any) is called
#             with alloc 20971520, num_ooms 1; torch.cuda.OutOfMemoryError
#             is caught and printed
# Verdict a report should give: fragmentation (40 MiB cached, 8 MiB asked,
# largest free block 5 MiB).
# Prints:
#   oom: CUDA out of memory. Tried to allocate 20.00 MiB. ...
#   allocated=41943040 reserved=83886080 inactive_split=41943040 num_alloc_retries=1 num_ooms=1
# and exits 0; exits 1, saying so, if no OutOfMemoryError came.
import sys

import torch

MiB = 1 << 20


def fill():
    return [torch.empty(5 * MiB, dtype=torch.uint8, device="cuda") for _ in range(16)]  # L:fill


def main():
    tensors = fill()
    for i in range(1, len(tensors), 2):
        tensors[i] = None  # L:free
    try:
        big = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")  # L:oom
    except torch.cuda.OutOfMemoryError as e:
        print("oom: %s" % e)
    else:
        print("py-oom.py: no out-of-memory error: run with SIMCUDA_MEM=380M", file=sys.stderr)
        del big
        return 1
    s = torch.cuda.memory_stats()
    print("allocated=%d reserved=%d inactive_split=%d num_alloc_retries=%d num_ooms=%d" % (
        s["allocated_bytes.all.current"], s["reserved_bytes.all.current"],
        s["inactive_split_bytes.all.current"], s["num_alloc_retries"], s["num_ooms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
