#!/bin/sh
# t707-torchdouble-async: the double's cudaMallocAsync backend
# (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; tests/torchdouble/torch/
# _async_allocator.py, after c10/cuda/CUDAMallocAsyncAllocator.cpp @0345947)
# on the simulated CUDA: memory_stats() figures worked out by hand from the
# simulated pool's rules (tests/simcuda/driver/pool.c: chunks of 32 MiB or
# the request rounded up to 2 MiB, blocks rounded up to 512 B, first fit
# in address order), the backend's refusals, the memory fraction's and the
# driver's out-of-memory errors, the backend chosen at load time, and,
# under memtrace run, one cudaMallocAsync of exactly each tensor's size and
# one cudaFreeAsync per free, with the torch=off note.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
TD=$ROOT/tests/torchdouble
pyd() {
	PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"
}
ASYNC=backend:cudaMallocAsync

# --- the figures --------------------------------------------------------------
# Before CUDA is initialized memory_stats() is {}. Then (the pool's release
# threshold is UINT64_MAX, so a synchronize frees nothing):
#   a 1000 B        the pool's first chunk, 32 MiB; a's block 1024 B
#   b 40 MiB + 1    does not fit the first chunk: a second one of 42 MiB
#                   (the request rounded up to 2 MiB); used 1024 + 41943552
#                   = 41944576 (the allocated peak), reserved 74 MiB =
#                   77594624 (the reserved peak)
#   del b; c 20 MiB first chunk: used 1024 + 20971520 = 20972544
#   synchronize     nothing trimmed: reserved 77594624
#   empty_cache     cudaMemPoolTrimTo(pool, 0): the empty 42 MiB chunk goes,
#                   reserved 33554432; the peaks stay
#   reset_peak_memory_stats  peaks = current: 20972544 and 33554432
# Only allocated_bytes, active_bytes (= allocated) and reserved_bytes of
# "all" are filled, current and peak; every other figure of the 122 is 0
# (requested_bytes, allocation counts, num_*, max_split_size).
cat >"$T/seq.py" <<'PY'
import torch
MiB = 1 << 20
def show(what):
    st = torch.cuda.memory_stats()
    print(what, len(st), " ".join("%s=%d" % (k, v) for k, v in st.items() if v))
print("backend", torch.cuda.memory.get_allocator_backend(), "stats", torch.cuda.memory_stats())
a = torch.empty(1000, dtype=torch.uint8, device="cuda")
b = torch.empty(40 * MiB + 1, dtype=torch.uint8, device="cuda")
del b
c = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
show("sync")
print("peaks", torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved(),
      torch.cuda.memory_allocated(), torch.cuda.memory_reserved())
torch.cuda.empty_cache()
show("empty_cache")
torch.cuda.reset_peak_memory_stats()
show("reset")
for what, f in (("history", lambda: torch.cuda.memory._record_memory_history(max_entries=10)),
                ("snapshot", torch.cuda.memory._snapshot),
                ("observer", lambda: torch._C._cuda_attach_out_of_memory_observer(print)),
                ("settings", lambda: torch.cuda.memory._set_allocator_settings("backend:native"))):
    try:
        f()
        print(what, "no error")
    except RuntimeError as e:
        print(what, "RuntimeError:", e)
print("history enabled", torch._C._cuda_isHistoryEnabled())
PY
cat >"$T/want" <<'EOF'
backend cudaMallocAsync stats OrderedDict()
sync 122 active_bytes.all.current=20972544 active_bytes.all.peak=41944576 allocated_bytes.all.current=20972544 allocated_bytes.all.peak=41944576 reserved_bytes.all.current=77594624 reserved_bytes.all.peak=77594624
peaks 41944576 77594624 20972544 77594624
empty_cache 122 active_bytes.all.current=20972544 active_bytes.all.peak=41944576 allocated_bytes.all.current=20972544 allocated_bytes.all.peak=41944576 reserved_bytes.all.current=33554432 reserved_bytes.all.peak=77594624
reset 122 active_bytes.all.current=20972544 active_bytes.all.peak=20972544 allocated_bytes.all.current=20972544 allocated_bytes.all.peak=20972544 reserved_bytes.all.current=33554432 reserved_bytes.all.peak=33554432
history RuntimeError: cudaMallocAsync does not yet support recordHistory. If you need it, please file an issue describing your use case.
snapshot RuntimeError: Calling snapshot with backend:cudaMallocAsync is not meaningful. (For backend:native, snapshot returns a detailed summary of all blocks tracked by the allocator, but the cudaMallocAsync backend does not track individual blocks.)
observer RuntimeError: cudaMallocAsync does not yet support attachOutOfMemoryObserver. If you need it, please file an issue describing your use case.
settings RuntimeError: Allocator backend parsed at runtime != allocator backend parsed at load time
history enabled False
EOF
PYTORCH_CUDA_ALLOC_CONF=$ASYNC pyd "$T/seq.py" >"$T/out" 2>"$T/err" || fail "seq.py: $(cat "$T/err")"
diff -u "$T/want" "$T/out" || fail "the async figures"
# the native backend's memory_stats are the caching allocator's, and its
# settings refuse the other backend at run time
pyd "$T/seq.py" >"$T/out" 2>"$T/err" || fail "seq.py native: $(cat "$T/err")"
expect_eq "$(sed -n 1p "$T/out")" "backend native stats OrderedDict()" "native backend"
expect_eq "$(grep '^settings' "$T/out")" "settings no error" "native: backend:native at run time"
printf 'import torch\ntorch.cuda.init()\ntorch.cuda.memory._set_allocator_settings("backend:cudaMallocAsync")\n' >"$T/switch.py"
pyd "$T/switch.py" >"$T/out" 2>&1 && fail "native: backend:cudaMallocAsync at run time accepted"
grep -q "^RuntimeError: Allocator backend parsed at runtime != allocator backend parsed at load time$" "$T/out" ||
	fail "native: switching at run time: $(tail -n 1 "$T/out")"

# --- where the backend comes from ------------------------------------------------
printf 'import torch\nprint(torch.cuda.get_allocator_backend())\n' >"$T/which.py"
expect_eq "$(PYTORCH_ALLOC_CONF=$ASYNC pyd "$T/which.py")" cudaMallocAsync "PYTORCH_ALLOC_CONF alone"
expect_eq "$(PYTORCH_ALLOC_CONF=$ASYNC TORCHDOUBLE_VERSION=2.1 pyd "$T/which.py")" native "2.1 reads PYTORCH_CUDA_ALLOC_CONF only"
expect_eq "$(PYTORCH_CUDA_ALLOC_CONF="expandable_segments:False, backend:cudaMallocAsync" pyd "$T/which.py")" cudaMallocAsync "backend as the second option"
expect_eq "$(PYTORCH_CUDA_ALLOC_CONF=backend:native PYTORCH_ALLOC_CONF=$ASYNC pyd "$T/which.py")" native "PYTORCH_CUDA_ALLOC_CONF first"
# another option beside the backend: a warning at the first allocation
printf 'import torch\nx = torch.empty(4, dtype=torch.uint8, device="cuda")\nprint(torch.cuda.memory_stats()["allocated_bytes.all.current"])\n' >"$T/one.py"
PYTORCH_CUDA_ALLOC_CONF=$ASYNC,max_split_size_mb:100 pyd "$T/one.py" >"$T/out" 2>"$T/err" || fail "one.py: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" 512 "a 4 B tensor's block"
grep -q "UserWarning: backend:cudaMallocAsync ignores max_split_size_mb,roundup_power2_divisions, and garbage_collect_threshold." "$T/err" ||
	fail "no warning for native options: $(cat "$T/err")"
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMalloc pyd "$T/one.py" >"$T/out" 2>&1 && fail "an unknown backend accepted"
grep -q "^RuntimeError: Unknown allocator backend, options are native and cudaMallocAsync$" "$T/out" ||
	fail "unknown backend: $(tail -n 1 "$T/out")"

# --- out of memory ----------------------------------------------------------------
# The memory fraction: 0.001 of the simulated 80 GiB = int(85899345.92) =
# 85899345 B (81.92 MiB) for the requests' own sizes (not the pool's): 1000
# + 20 MiB held, 70 MiB more would be 94372840 B: refused without a
# cudaMallocAsync call; 60 MiB fits (83887080 B), in a new 60 MiB chunk:
# the pool's used 1024 + 20 MiB + 60 MiB = 83887104, reserved 92 MiB =
# 96468992. (c10's format_size stops at GiB: 1 GiB is "1024.00 MiB", the
# unset limit UINT64_MAX "17179869184.00 GiB".)
# The driver's own failure (SIMCUDA_MEM=1G: 724 MiB left after the 300 MiB
# context) of an 800 MiB request: OutOfMemoryError, the error cleared, the
# next allocation succeeds; no counter moves (this backend keeps none).
cat >"$T/oom.py" <<'PY'
import sys, torch
MiB = 1 << 20
a = torch.empty(1000, dtype=torch.uint8, device="cuda")
c = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
if sys.argv[1] == "fraction":
    torch.cuda.set_per_process_memory_fraction(0.001)
    big = 70 * MiB
else:
    big = 800 * MiB
try:
    x = torch.empty(big, dtype=torch.uint8, device="cuda")
    print("no error")
except torch.cuda.OutOfMemoryError as e:
    print("\n".join(l for l in str(e).split("\n") if not l.startswith("Free")))
y = torch.empty(60 * MiB, dtype=torch.uint8, device="cuda")
st = torch.cuda.memory_stats()
print(st["allocated_bytes.all.current"], st["reserved_bytes.all.current"], st["num_ooms"])
PY
cat >"$T/want" <<'EOF'
Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 20.00 MiB
Requested               : 70.00 MiB
Device limit            : 80.00 GiB
PyTorch limit (set by user-supplied memory fraction)
                        : 81.92 MiB
83887104 96468992 0
EOF
PYTORCH_CUDA_ALLOC_CONF=$ASYNC SIMCUDA_LOG=$T/oom.log pyd "$T/oom.py" fraction >"$T/out" 2>"$T/err" || fail "oom.py: $(cat "$T/err")"
diff -u "$T/want" "$T/out" || fail "the memory fraction"
expect_eq "$(grep -c '^alloc fn=cuMemAllocAsync kind=async .* size=73400320 ' "$T/oom.log")" 0 "a refused request reaches the driver"
cat >"$T/want" <<'EOF'
Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 20.00 MiB
Requested               : 800.00 MiB
Device limit            : 1024.00 MiB
PyTorch limit (set by user-supplied memory fraction)
                        : 17179869184.00 GiB
EOF
PYTORCH_CUDA_ALLOC_CONF=$ASYNC SIMCUDA_MEM=1G SIMCUDA_LOG=$T/oom.log pyd "$T/oom.py" driver >"$T/out" 2>"$T/err" || fail "oom.py driver: $(cat "$T/err")"
sed -n 1,6p "$T/out" | diff -u "$T/want" - || fail "the driver's out of memory"
expect_eq "$(sed -n 7p "$T/out")" "83887104 96468992 0" "after the driver's out of memory"
expect_eq "$(grep -c '^alloc fn=cuMemAllocAsync kind=async .* size=838860800 .*result=2 ' "$T/oom.log")" 1 "the failed cuMemAllocAsync"

# --- two devices: a device's figures are 0 until its first allocation -------------
cat >"$T/dev.py" <<'PY'
import torch
x = torch.empty(4097, dtype=torch.uint8, device="cuda:1")
print(torch.cuda.max_memory_reserved(0), torch.cuda.max_memory_allocated(0),
      torch.cuda.max_memory_reserved(1), torch.cuda.max_memory_allocated(1))
PY
expect_eq "$(PYTORCH_CUDA_ALLOC_CONF=$ASYNC SIMCUDA_DEVICES=2 pyd "$T/dev.py" 2>"$T/err")" "0 0 33554432 4608" \
	"device 1 only: $(cat "$T/err")"

# --- under memtrace: the CUDA level ------------------------------------------------
# Each tensor one cudaMallocAsync of exactly its size on its stream (1000 B
# and 5 MiB + 3 on the default stream, 4097 B on a side stream), each free
# one cudaFreeAsync; a tensor record_stream'ed on the side stream is freed
# on a stream of the backend's own (neither 0 nor the side stream), and
# record_stream on its own stream warns. One torch=off note, no history.
cat >"$T/traced.py" <<'PY'
import torch
a = torch.empty(1000, dtype=torch.uint8, device="cuda")
b = torch.empty((5 << 20) + 3, dtype=torch.uint8, device="cuda")
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    c = torch.empty(4097, dtype=torch.uint8, device="cuda")
c.record_stream(s)
b.record_stream(s)
print("streams 0x%x" % s.cuda_stream)
del a, b, c
PY
PYTORCH_CUDA_ALLOC_CONF=$ASYNC PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 traced python3 "$T/traced.py" >"$T/out" 2>"$T/err" ||
	fail "traced.py: $(cat "$T/err")"
grep -q "UserWarning: Called record_stream on tensor whose original creation stream matches the recorded stream. This is unnecessary and has no effect." "$T/err" ||
	fail "no warning for record_stream on the creation stream: $(cat "$T/err")"
side=$(sed -n 's/^streams //p' "$T/out")
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump"
awk -v side="$side" '
{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
$1 == "alloc" && f["kind"] == "async" { st[f["addr"]] = f["stream"]; print "alloc", f["api"], f["bytes"], f["result"], (f["stream"] == "0x0" ? "default" : f["stream"] == side ? "side" : "other") }
$1 == "free" && f["kind"] == "async" { print "free", f["api"], f["result"], (f["stream"] == "0x0" ? "default" : f["stream"] == side ? "side" : "other"), (f["stream"] == st[f["addr"]] ? "same" : "unifying") }
' "$T/dump" >"$T/got"
cat >"$T/want" <<'EOF'
alloc cudaMallocAsync 1000 0 default
alloc cudaMallocAsync 5242883 0 default
alloc cudaMallocAsync 4097 0 side
free cudaFreeAsync 0 default same
free cudaFreeAsync 0 other unifying
free cudaFreeAsync 0 side same
EOF
diff -u "$T/want" "$T/got" || fail "the CUDA-level events"
grep -q '^fw_info .*torch=off\\nreason=backend cudaMallocAsync has no history; tensors are seen at the CUDA level\\n"$' "$T/dump" ||
	fail "no torch=off note: $(grep '^fw_info' "$T/dump")"
expect_eq "$(grep -c '^fw_event' "$T/dump")" 0 "framework events"
