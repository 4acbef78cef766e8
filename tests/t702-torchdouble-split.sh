#!/bin/sh
# t702-torchdouble-split: max_split_size_mb on the double, against PyTorch
# @001074d's rules worked out by hand: should_split's `size < max_split_size`,
# get_free_block's oversize rules (no oversize block for a smaller request;
# an oversize request takes a block up to size + 20 MiB), and
# release_available_cached_blocks freeing one oversize block when cudaMalloc
# fails, not the whole cache; oversize_allocations/oversize_segments and
# max_split_size in memory_stats.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
pyd() { (cd "$T" && PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"); }

# max_split_size_mb:100 (104857600); SIMCUDA_MEM=550M less the 300M context
# leaves 250 MiB for the allocator.
#   a 120 MiB  oversize: its own 120 MiB segment, not split (120 >= 100);
#              oversize_allocations 1, oversize_segments 1; freed
#   b 30 MiB   < 100: the free 120 MiB block is oversize: refused; new 30 MiB
#              segment; freed
#   c 110 MiB  oversize: best fit 120 MiB < 110 + 20: taken whole; freed
#   d 90 MiB   < 100: 120 refused again; new 90 MiB segment; freed.
#              reserved 30 + 90 + 120 = 240 MiB = 251658240 (the peak)
#   e 101 MiB  oversize: 120 MiB block again (< 121 MiB); freed
#   g 95 MiB   < 100: 120 refused (30 and 90 too small); cudaMalloc of
#              get_allocation_size = 96 MiB fails (10 MiB free); then
#              release_available_cached_blocks: key max(95, 100) MiB, the
#              120 MiB block is the lower bound: freed (one segment_free);
#              cudaMalloc 96 MiB succeeds; no retry counted. 96 MiB block,
#              remainder 1 MiB not split.
#   reserved now 30 + 90 + 96 = 216 MiB = 226492416; allocated 96 MiB
#   allocated peak = requested peak = 120 MiB = 125829120 (a; c and e take
#   the 120 MiB block for 110 and 101 MiB)
#   oversize_allocations: allocated 3 (a, c, e), peak 1, current 0;
#   oversize_segments: allocated 1, current 0
cat >"$T/split.py" <<'PY'
import torch
MiB = 1 << 20
a = torch.empty(120 * MiB, dtype=torch.uint8, device="cuda"); pa = a.data_ptr(); del a
b = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda"); del b
c = torch.empty(110 * MiB, dtype=torch.uint8, device="cuda"); pc = c.data_ptr(); del c
d = torch.empty(90 * MiB, dtype=torch.uint8, device="cuda"); del d
e = torch.empty(101 * MiB, dtype=torch.uint8, device="cuda"); pe = e.data_ptr(); del e
g = torch.empty(95 * MiB, dtype=torch.uint8, device="cuda")
print("c and e in a's block:", pa == pc == pe)
s = torch.cuda.memory_stats()
for k in ("allocated_bytes.all.peak", "requested_bytes.all.peak", "reserved_bytes.all.peak",
          "reserved_bytes.all.current", "allocated_bytes.all.current", "num_alloc_retries",
          "num_device_free", "max_split_size", "oversize_allocations.allocated",
          "oversize_allocations.peak", "oversize_allocations.current",
          "oversize_segments.allocated", "oversize_segments.current"):
    print(k, s[k])
print("settings max_split_size", torch.cuda.memory._snapshot()["allocator_settings"]["max_split_size"])
PY
SIMCUDA_MEM=550M PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:100 pyd split.py >"$T/out" 2>"$T/err" ||
	fail "split.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
c and e in a's block: True
allocated_bytes.all.peak 125829120
requested_bytes.all.peak 125829120
reserved_bytes.all.peak 251658240
reserved_bytes.all.current 226492416
allocated_bytes.all.current 100663296
num_alloc_retries 0
num_device_free 1
max_split_size 104857600
oversize_allocations.allocated 3
oversize_allocations.peak 1
oversize_allocations.current 0
oversize_segments.allocated 1
oversize_segments.current 0
settings max_split_size 104857600
EOF
diff -u "$T/want" "$T/out" || fail "max_split_size_mb:100"
# Only the 120 MiB segment went back to the driver.
expect_eq "$(awk '$1 == "free" && / kind=device /' "$T/calls.log" | wc -l | tr -d ' ')" 1 "cudaFree calls"

# Unset, max_split_size reads -1 and a 120 MiB block is split for 30 MiB:
# 120 - 30 = 90 MiB > 1 MiB, so reserved stays 120 MiB.
cat >"$T/nosplit.py" <<'PY'
import torch
MiB = 1 << 20
a = torch.empty(120 * MiB, dtype=torch.uint8, device="cuda"); del a
b = torch.empty(30 * MiB, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory_stats()
print(s["max_split_size"], s["reserved_bytes.all.current"], s["inactive_split_bytes.all.current"])
PY
pyd nosplit.py >"$T/out" 2>"$T/err" || fail "nosplit.py: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "-1 125829120 94371840" "no max_split_size"
