# bench/torch-rate.py RATE SECONDS - a tensor workload at RATE history
# entries a second (alloc, free_requested, free_completed: 3 per tensor)
# for SECONDS, on whatever torch is first on PYTHONPATH (the test double in
# bench/torch-budget.sh), with sizes that vary (4 B to 9 MiB, a few kept
# alive across ticks, as activations are). Paced in 10 ms ticks; prints
# "entries=N wall_s=S" at the end, the entries PyTorch's counters saw.
import sys
import time

import torch

rate = float(sys.argv[1])
secs = float(sys.argv[2])
sizes = [4, 1000, 65536 + 7, 1 << 20, (3 << 20) + 1, (9 << 20) - 5, 300000, 512]
per_tick = max(1, int(rate / 3 / 100))
t0 = time.monotonic()
live = []
k = 0
tick = 0
while time.monotonic() - t0 < secs:
    for _ in range(per_tick):
        live.append(torch.empty(sizes[k % len(sizes)], dtype=torch.uint8, device="cuda"))
        k += 1
        if len(live) > 16:
            live.pop(0)
    tick += 1
    wait = t0 + tick * 0.01 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
del live
st = torch.cuda.memory_stats()
n = st["allocation.all.allocated"] + st["allocation.all.freed"] + st["active.all.freed"]
print("entries=%d wall_s=%.3f" % (n, time.monotonic() - t0))
