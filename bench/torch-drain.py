# bench/torch-drain.py [N] - the cost per event of draining PyTorch's
# allocator history into the trace (python/memtrace_torch.py), on the torch
# test double over the simulated CUDA, under memtrace run:
#   LD_LIBRARY_PATH=build/simcuda/driver:build/simcuda/runtime \
#   PYTHONPATH=tests/torchdouble build/memtrace run -o /tmp/d.bin -- \
#       python3 bench/torch-drain.py 20000
# Makes N allocs and their frees (3 history entries each, a few distinct
# stacks), then times the _snapshot() (the double's, in Python; PyTorch's
# is C++) and, apart, one drain of that snapshot: memtrace's own part
# (finding the new entries, clock mapping, stack interning, packing and
# memtrace_fw_events).
import sys
import time

import torch
import memtrace_torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def site(i):
    x = torch.empty(512 * (1 + i % 8), dtype=torch.uint8, device="cuda")
    del x


for i in range(n):
    [site, lambda i: site(i), lambda i: (site(i),), lambda i: [site(i)], lambda i: {site(i)}][i % 5](i)
st = memtrace_torch._state
if st is None or not st.armed:
    sys.exit("torch-drain.py: run it under memtrace run (the hook is not armed)")
t0 = time.perf_counter()
snap = torch.cuda.memory._snapshot()
t1 = time.perf_counter()
entries = len(snap["device_traces"][0])
st.snap = lambda: snap          # the drain converts and writes this one
st.drain("bench")
t2 = time.perf_counter()
print("%d entries: the double's _snapshot %.2f us/entry; memtrace's drain %.2f us/event (%d events)"
      % (entries, (t1 - t0) / entries * 1e6, (t2 - t1) / st.drained * 1e6, st.drained))
