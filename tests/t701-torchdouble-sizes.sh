#!/bin/sh
# t701-torchdouble-sizes: the double's block sizes against PyTorch's rules
# (c10/cuda/CUDACachingAllocator.cpp @001074d: round_size, get_allocation_size,
# should_split; CUDAAllocatorConfig's roundup_power2_divisions), figures
# worked out by hand: odd sizes (a 4-byte tensor takes a 512 B block), the
# 33 MiB tensor in an unsplit 34 MiB block, roundup_power2_divisions as one
# value and as the [256:1,512:2,>:4] list, PYTORCH_ALLOC_CONF and
# _set_allocator_settings.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
pyd() { (cd "$T" && PYTHONPATH=$TD:$T PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"); }
cat >"$T/stats.py" <<'PY'
import torch
MiB = 1 << 20
def st(what, *keys):
    s = torch.cuda.memory_stats()
    print(what + ":", " ".join("%s=%d" % (k, s[k]) for k in keys))
PY

# --- odd sizes, the unsplit remainder --------------------------------------
# a 4 B      -> round_size 512 (< kMinBlockSize); small pool, new 2 MiB
#               segment, split (remainder 2 MiB - 512 >= 512)
# b 1000 B   -> 1024, from the small remainder, split
# c 33 MiB   -> 33 MiB (a 512 multiple); large pool, no free block;
#               get_allocation_size rounds to 2 MiB: a 34 MiB segment; the
#               remainder 1 MiB is not > kSmallSize: NOT split, the block is 34 MiB
# d 3 MiB+1  -> 3 MiB + 512 = 3146240; a 20 MiB segment (< kMinLargeAlloc),
#               split: remainder 20971520 - 3146240 = 17825280 > 1 MiB
# allocated peak = 512 + 1024 + 35651584 + 3146240           = 38799360
# requested peak = 4 + 1000 + 34603008 + 3145729             = 37749741
# reserved peak  = 2 MiB + 34 MiB + 20 MiB                   = 58720256
# del c: allocated = 512 + 1024 + 3146240                     = 3147776
#        inactive split = (2097152 - 1536) + 17825280         = 19920896
#        (the free 34 MiB block is whole: not inactive split)
#        largest free block = 34 MiB                          = 35651584
# e 33 MiB -> best fit is the free 34 MiB block, taken whole again:
#        allocated = 3147776 + 35651584 = 38799360, still 3 segments
cat >"$T/odd.py" <<'PY'
from stats import *
a = torch.empty(4, dtype=torch.uint8, device="cuda")
b = torch.empty(1000, dtype=torch.uint8, device="cuda")
c = torch.empty(33 * MiB, dtype=torch.uint8, device="cuda")
d = torch.empty(3 * MiB + 1, dtype=torch.uint8, device="cuda")
del c
st("peaks", "allocated_bytes.all.peak", "requested_bytes.all.peak", "reserved_bytes.all.peak")
st("c freed", "allocated_bytes.all.current", "inactive_split_bytes.all.current")
free = [x["size"] for s in torch.cuda.memory._snapshot()["segments"] for x in s["blocks"]
        if x["state"] == "inactive"]
print("largest free:", max(free))
e = torch.empty(33 * MiB, dtype=torch.uint8, device="cuda")
st("e", "allocated_bytes.all.current", "reserved_bytes.all.current", "segment.all.current")
PY
pyd odd.py >"$T/out" 2>"$T/err" || fail "odd.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
peaks: allocated_bytes.all.peak=38799360 requested_bytes.all.peak=37749741 reserved_bytes.all.peak=58720256
c freed: allocated_bytes.all.current=3147776 inactive_split_bytes.all.current=19920896
largest free: 35651584
e: allocated_bytes.all.current=38799360 reserved_bytes.all.current=58720256 segment.all.current=3
EOF
diff -u "$T/want" "$T/out" || fail "odd sizes"

# --- roundup_power2_divisions:4 (every interval 4 divisions) --------------
# x 1200 B    -> 1200 <= 512 * 4: plain 512 rounding, 1536
# y 5000 B    -> > 2048: floor 4096, division 4096 >> 2 = 1024: 5120
# z 5 MiB+1   -> floor 4 MiB, division 1 MiB: 6 MiB; a 20 MiB segment, split
#                (remainder 14 MiB)
# w 12 MiB+1  -> floor 8 MiB, division 2 MiB: 14 MiB; the 14 MiB remainder
#                fits exactly: taken, nothing to split
# allocated = 1536 + 5120 + 6 MiB + 14 MiB = 20978176
# requested = 1200 + 5000 + 5242881 + 12582913 = 17831994
# reserved  = 2 MiB + 20 MiB = 23068672, 2 segments
cat >"$T/round.py" <<'PY'
import sys
from stats import *
x = torch.empty(1200, dtype=torch.uint8, device="cuda")
y = torch.empty(5000, dtype=torch.uint8, device="cuda")
z = torch.empty(5 * MiB + 1, dtype=torch.uint8, device="cuda")
w = torch.empty(12 * MiB + 1, dtype=torch.uint8, device="cuda")
st("round", "allocated_bytes.all.current", "requested_bytes.all.current",
   "reserved_bytes.all.current", "segment.all.current")
if len(sys.argv) > 1:
    t = torch.empty(600 * MiB + 1, dtype=torch.uint8, device="cuda")
    st("600 MiB", "allocated_bytes.all.current")
r = torch.cuda.memory._snapshot()["allocator_settings"]["roundup_power2_divisions"]
print("settings:", " ".join("%s:%d" % kv for kv in r.items()))
PY
PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4 pyd round.py >"$T/out" 2>"$T/err" ||
	fail "round.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
round: allocated_bytes.all.current=20978176 requested_bytes.all.current=17831994 reserved_bytes.all.current=23068672 segment.all.current=2
settings: 1:4 2:4 4:4 8:4 16:4 32:4 64:4 128:4 256:4 512:4 1024:4 2048:4 4096:4 8192:4 16384:4 32768:4
EOF
diff -u "$T/want" "$T/out" || fail "roundup_power2_divisions:4"

# --- the list form [256:1,512:2,>:4] ----------------------------------------
# parseRoundUpPower2Divisions: 256:1 fills the intervals below 256 MiB and
# 256 itself with 1; 512:2 sets 512; ">:4" fills from the last key's
# interval (512, included) to the end: so 512 MiB..1 GiB gets 4, not 2.
# Below 256 MiB, 1 division means plain 512 rounding:
#   x 1536, y 5120, z 5 MiB + 512 (20 MiB segment, split, remainder
#   15 MiB - 512), w 12 MiB + 512 (from that remainder, split: 3 MiB - 1024 left)
#   allocated = 1536 + 5120 + 5243392 + 12583424 = 17833472, reserved 22 MiB
# t 600 MiB+1 -> 4 divisions: floor 512 MiB, division 128 MiB: 640 MiB
#   (with 2 it would be 768 MiB): allocated 17833472 + 671088640 = 688922112
PYTORCH_CUDA_ALLOC_CONF='roundup_power2_divisions:[256:1,512:2,>:4]' pyd round.py big \
	>"$T/out" 2>"$T/err" || fail "round.py list: $(cat "$T/err")"
cat >"$T/want" <<EOF
round: allocated_bytes.all.current=17833472 requested_bytes.all.current=17831994 reserved_bytes.all.current=23068672 segment.all.current=2
600 MiB: allocated_bytes.all.current=688922112
settings: 1:1 2:1 4:1 8:1 16:1 32:1 64:1 128:1 256:1 512:4 1024:4 2048:4 4096:4 8192:4 16384:4 32768:4
EOF
diff -u "$T/want" "$T/out" || fail "roundup_power2_divisions list"

# --- PYTORCH_ALLOC_CONF (newer name), _set_allocator_settings, bad options ----
# 5000 B with 2 divisions: floor 4096, division 2048 -> 6144; max_split_size
# 64 MiB = 67108864; max_split_size_mb must be > 20 in this revision.
cat >"$T/set.py" <<'PY'
from stats import *
s = torch.cuda.memory._snapshot()["allocator_settings"]
print("env:", s["PYTORCH_CUDA_ALLOC_CONF"], s["roundup_power2_divisions"]["1"])
torch.cuda.memory._set_allocator_settings("roundup_power2_divisions:2,max_split_size_mb:64")
s = torch.cuda.memory._snapshot()["allocator_settings"]
print("set:", s["PYTORCH_CUDA_ALLOC_CONF"], s["roundup_power2_divisions"]["1"], s["max_split_size"])
x = torch.empty(5000, dtype=torch.uint8, device="cuda")
st("x", "allocated_bytes.all.current")
for bad in ("max_split_size_mb:20", "bogus:1", "roundup_power2_divisions:3"):
    try:
        torch.cuda.memory._set_allocator_settings(bad)
    except RuntimeError as e:
        print("refused:", bad)
PY
PYTORCH_ALLOC_CONF=roundup_power2_divisions:8 pyd set.py >"$T/out" 2>"$T/err" ||
	fail "set.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
env: roundup_power2_divisions:8 8
set: roundup_power2_divisions:2,max_split_size_mb:64 2 67108864
x: allocated_bytes.all.current=6144
refused: max_split_size_mb:20
refused: bogus:1
refused: roundup_power2_divisions:3
EOF
diff -u "$T/want" "$T/out" || fail "_set_allocator_settings"
