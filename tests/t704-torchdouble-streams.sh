#!/bin/sh
# t704-torchdouble-streams: record_stream and the memory fraction's garbage
# collection on the double, against PyTorch @001074d's rules worked out by
# hand. record_stream: free() records free_requested at once (allocated
# drops) and free_completed only at the next malloc's process_events, or at
# empty_cache's synchronize_and_free_events (requested drops then); the
# snapshot shows the block "active_pending_free" meanwhile.
# garbage_collection_threshold with set_per_process_memory_fraction: the
# older of two free segments is given back before a cudaMalloc, and the
# fraction is the limit an OOM reports.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
pyd() { (cd "$T" && PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"); }

# --- record_stream ------------------------------------------------------------
#   a 3 MiB on the default stream, used on s (record_stream), del a:
#     free_requested: allocated 0; requested and active still 3 MiB
#     snapshot: 3 MiB active_pending_free, 17 MiB inactive (the 20 MiB
#     segment's remainder); its "snapshot" entry counts 3 MiB active
#   b 1 MiB: process_events first: free_completed of a (requested 0), then
#     the small segment and b: allocated = requested = 1 MiB
#   c 3 MiB (the 20 MiB block again), record_stream, del c, empty_cache:
#     synchronize_and_free_events (num_sync_all_streams 1) completes c, the
#     whole 20 MiB segment is freed: reserved 2 MiB
#   peaks: allocated = requested = 1 + 3 = 4 MiB = 4194304
cat >"$T/rs.py" <<'PY'
import torch
MiB = 1 << 20
torch.cuda.memory._record_memory_history(max_entries=1000)
def st(what, *keys):
    s = torch.cuda.memory_stats()
    print(what + ":", " ".join("%s=%d" % (k.split(".")[0], s[k]) for k in keys))
s = torch.cuda.Stream()
print("stream is not the default:", s.cuda_stream != 0, s != torch.cuda.current_stream())
a = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")
a.record_stream(s)
del a
st("a freed", "allocated_bytes.all.current", "requested_bytes.all.current", "active_bytes.all.current")
print("blocks:", " ".join("%d/%s" % (b["size"], b["state"])
                          for g in torch.cuda.memory._snapshot()["segments"] for b in g["blocks"]))
b = torch.empty(MiB, dtype=torch.uint8, device="cuda")
st("b", "allocated_bytes.all.current", "requested_bytes.all.current", "active_bytes.all.current")
c = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")
c.record_stream(s)
del c
torch.cuda.empty_cache()
st("empty_cache", "requested_bytes.all.current", "reserved_bytes.all.current",
   "num_sync_all_streams", "allocated_bytes.all.peak", "requested_bytes.all.peak")
print(" ".join(e["action"] + "/" + str(e["size"])
               for e in torch.cuda.memory._snapshot()["device_traces"][0]))
PY
pyd rs.py >"$T/out" 2>"$T/err" || fail "rs.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
stream is not the default: True True
a freed: allocated_bytes=0 requested_bytes=3145728 active_bytes=3145728
blocks: 3145728/active_pending_free 17825792/inactive
b: allocated_bytes=1048576 requested_bytes=1048576 active_bytes=1048576
empty_cache: requested_bytes=1048576 reserved_bytes=2097152 num_sync_all_streams=1 allocated_bytes=4194304 requested_bytes=4194304
segment_alloc/20971520 alloc/3145728 free_requested/3145728 snapshot/3145728 free_completed/3145728 segment_alloc/2097152 alloc/1048576 alloc/3145728 free_requested/3145728 free_completed/3145728 segment_free/20971520
EOF
diff -u "$T/want" "$T/out" || fail "record_stream"

# A tensor allocated on the side stream carries it in its entries and
# segment (the cudaStream_t as an int, as PyTorch's snapshot writes it).
cat >"$T/side.py" <<'PY'
import torch
torch.cuda.memory._record_memory_history(max_entries=100)
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    x = torch.empty(1000, dtype=torch.uint8, device="cuda")
y = torch.empty(1000, dtype=torch.uint8, device="cuda")
snap = torch.cuda.memory._snapshot()
print(sorted(set(e["stream"] == s.cuda_stream for e in snap["device_traces"][0] if e["action"] == "alloc")),
      sorted(g["stream"] == s.cuda_stream for g in snap["segments"]))
PY
pyd side.py >"$T/out" 2>"$T/err" || fail "side.py: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "[False, True] [False, True]" "allocations on a side stream"

# --- garbage_collection_threshold:0.5 with a fraction of 0.1 --------------------
# SIMCUDA_MEM=1300M: total 1363148800 B; allowed = 0.1 * total = 136314880
# (130 MiB); gc threshold = 0.5 * allowed = 68157440 (65 MiB). The large
# pool's get_free_block count goes 1, 2, 3, 4 at a, e, f, h's lookups.
#   a 40 MiB  segment 40 MiB; del a: inserted at count 1
#   e 45 MiB  40 < 45; total 40 MiB <= 65: no GC; segment 46 MiB (2 MiB
#             rounding); del e: inserted at count 2
#   f 50 MiB  nothing fits; total 86 MiB > 65: GC, target 21 MiB; ages at
#             count 3: a 2, e 1, mean 1.5: a (40 MiB) is freed, e kept
#             (reclaimed 40 >= 21 ends it); then a 50 MiB segment
#             reserved 46 + 50 = 96 MiB = 100663296, one segment_free
#   h 100 MiB GC: total 96 > 65, target 31; e (age 2 >= 2) freed;
#             alloc_block: 50 + 100 > 130 MiB allowed: refused without a
#             cudaMalloc; release_cached_blocks (nothing left); the retry is
#             refused too: OOM, observer(0, 104857600, 136314880, free),
#             message "130.00 MiB allowed; "; reserved 50 MiB = 52428800
# Without the fraction, no GC: 40 + 46 + 50 = 136 MiB, then h fits: 236 MiB.
cat >"$T/gc.py" <<'PY'
import sys, torch
MiB = 1 << 20
if sys.argv[1] == "fraction":
    torch.cuda.set_per_process_memory_fraction(0.1)
torch.cuda._lazy_init()
torch._C._cuda_attach_out_of_memory_observer(
    lambda d, alloc, limit, free: print("observer alloc=%d limit=%d" % (alloc, limit)))
def st(what):
    s = torch.cuda.memory_stats()
    print("%s: reserved=%d segments_freed=%d retries=%d ooms=%d" % (what,
          s["reserved_bytes.all.current"], s["num_device_free"], s["num_alloc_retries"], s["num_ooms"]))
a = torch.empty(40 * MiB, dtype=torch.uint8, device="cuda"); del a
e = torch.empty(45 * MiB, dtype=torch.uint8, device="cuda"); del e
f = torch.empty(50 * MiB, dtype=torch.uint8, device="cuda")
st("f")
try:
    h = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda")
except torch.cuda.OutOfMemoryError as x:
    print("oom:", "130.00 MiB allowed; " in str(x))
st("h")
PY
SIMCUDA_MEM=1300M PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.5 pyd gc.py fraction \
	>"$T/out" 2>"$T/err" || fail "gc.py: $(cat "$T/err")"
cat >"$T/want" <<EOF
f: reserved=100663296 segments_freed=1 retries=0 ooms=0
observer alloc=104857600 limit=136314880
oom: True
h: reserved=52428800 segments_freed=2 retries=1 ooms=1
EOF
diff -u "$T/want" "$T/out" || fail "garbage collection"
SIMCUDA_MEM=1300M PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.5 pyd gc.py none \
	>"$T/out" 2>"$T/err" || fail "gc.py none: $(cat "$T/err")"
printf '%s\n' "f: reserved=142606336 segments_freed=0 retries=0 ooms=0" \
	"h: reserved=247463936 segments_freed=0 retries=0 ooms=0" | diff -u - "$T/out" || fail "no fraction, no GC"
