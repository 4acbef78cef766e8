#!/bin/sh
# t700-torchdouble: the test double of torch (tests/torchdouble) that the
# PyTorch cases run on, checked on its own over the simulated CUDA: exact
# memory_stats after a scripted sequence (allocated, reserved, inactive
# split, empty_cache); a retry that frees the cache; an out-of-memory error
# with the cache in pieces (num_alloc_retries, the observer, the "oom"
# entry); the history's ring buffer dropping its oldest entries, and the
# "snapshot" entry each _snapshot() leaves; frames innermost first;
# time_us on CLOCK_REALTIME; the snapshot's blocks tiling each segment;
# _lazy_call waiting for the first allocation; the three py-*.py programs'
# own figures; and, under memtrace run, the double's cudaMalloc/cudaFree
# calls in the trace as the segments of its history and snapshot.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "no python3"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "python3 older than 3.8"
TD=$ROOT/tests/torchdouble
MiB=1048576

# pyd ARGS...: python3 with the double first on the path, on the simulated
# CUDA, call log in $T/calls.log (emptied first)
pyd() {
	rm -f "$T/calls.log"
	PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim python3 "$@"
}
# line FILE NAME: the line of FILE marked "# L:NAME"
line() { grep -n "# L:$2\$" "$1" | cut -d: -f1; }
# sim_allocs: the call log's allocations as "ADDR SIZE RESULT", frees as "free ADDR"
sim_calls() {
	awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	       if ($1 == "alloc") print "alloc", f["addr"], f["size"], f["result"]
	       else if ($1 == "free") print "free", f["addr"] }' "$T/calls.log"
}

# --- lazy init, then a scripted sequence with exact figures ----------------
cat >"$T/seq.py" <<'PY'
import torch
MiB = 1 << 20
ran = []
print("available=%s initialized=%s queued=%d stats=%d" % (
    torch.cuda.is_available(), torch.cuda.is_initialized(), len(torch.cuda._queued_calls),
    len(torch.cuda.memory_stats())))
torch.cuda._lazy_call(lambda: ran.append(torch.cuda.is_initialized()))
print("before first allocation: ran=%s" % ran, flush=True)
def stats(what):
    s = torch.cuda.memory_stats()
    print("%s: allocated=%d reserved=%d inactive_split=%d/%d segments=%d allocations=%d "
          "peak=%d/%d" % (what, s["allocated_bytes.all.current"], s["reserved_bytes.all.current"],
          s["inactive_split_bytes.all.current"], s["inactive_split.all.current"],
          s["segment.all.current"], s["allocation.all.allocated"],
          s["allocated_bytes.all.peak"], s["reserved_bytes.all.peak"]))
a = torch.empty(3 * MiB, dtype=torch.uint8, device="cuda")
print("after first allocation: ran=%s initialized=%s" % (ran, torch.cuda.is_initialized()))
torch.cuda._lazy_call(lambda: ran.append("at once"))
print("lazy call once initialized: ran=%s" % ran)
b = torch.empty(5 * MiB, dtype=torch.uint8, device="cuda")
c = torch.empty(716800, dtype=torch.uint8, device="cuda")
d = torch.empty(14 * MiB, dtype=torch.uint8, device="cuda")
del a
stats("a freed")
for seg in torch.cuda.memory._snapshot()["segments"]:
    blocks = seg["blocks"]
    addr = seg["address"]
    for blk in blocks:
        assert blk["address"] == addr, "blocks do not tile the segment"
        addr += blk["size"]
    assert addr == seg["address"] + seg["total_size"], "blocks do not cover the segment"
    assert seg["allocated_size"] == sum(x["size"] for x in blocks if x["state"] == "active_allocated")
    print("segment %#x %d %s allocated=%d:" % (seg["address"], seg["total_size"],
          seg["segment_type"], seg["allocated_size"]),
          " ".join("%d/%s" % (x["size"], x["state"]) for x in blocks))
del b
stats("b freed")
torch.cuda.empty_cache()
stats("empty_cache")
print("allocated=%d max_allocated=%d reserved=%d max_reserved=%d" % (
    torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(),
    torch.cuda.memory_reserved(), torch.cuda.max_memory_reserved()))
PY
pyd "$T/seq.py" >"$T/out" 2>"$T/err" || fail "seq.py failed: $(cat "$T/err")"
A=0x500000000000 S=0x500001400000 D=0x500001600000
cat >"$T/want" <<EOF
available=True initialized=False queued=2 stats=0
before first allocation: ran=[]
after first allocation: ran=[False] initialized=True
lazy call once initialized: ran=[False, 'at once']
a freed: allocated=20639744 reserved=37748736 inactive_split=17108992/3 segments=3 allocations=4 peak=23785472/37748736
segment $A 20971520 large allocated=5242880: 3145728/inactive 5242880/active_allocated 12582912/inactive
segment $S 2097152 small allocated=716800: 716800/active_allocated 1380352/inactive
segment $D 14680064 large allocated=14680064: 14680064/active_allocated
b freed: allocated=15396864 reserved=37748736 inactive_split=1380352/1 segments=3 allocations=4 peak=23785472/37748736
empty_cache: allocated=15396864 reserved=16777216 inactive_split=1380352/1 segments=2 allocations=4 peak=23785472/37748736
allocated=15396864 max_allocated=23785472 reserved=16777216 max_reserved=37748736
EOF
diff -u "$T/want" "$T/out" || fail "figures of the scripted sequence"
# Exactly the three segments, and empty_cache freed the one left whole.
sim_calls >"$T/calls"
printf '%s\n' "alloc $A 20971520 0" "alloc $S 2097152 0" "alloc $D 14680064 0" "free $A" |
	diff -u - "$T/calls" || fail "the double's CUDA calls"

# --- a failed cudaMalloc that freeing the cache cures --------------------------
cat >"$T/retry.py" <<'PY'
import torch
MiB = 1 << 20
a = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
b = torch.empty(20 * MiB, dtype=torch.uint8, device="cuda")
del a
c = torch.empty(MiB, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory_stats()
print("retries=%d ooms=%d reserved=%d c=%#x" % (s["num_alloc_retries"], s["num_ooms"],
      s["reserved_bytes.all.current"], c.data_ptr()))
PY
SIMCUDA_MEM=340M pyd "$T/retry.py" >"$T/out" 2>"$T/err" || fail "retry.py failed: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "retries=1 ooms=0 reserved=23068672 c=0x500000000000" "a retry after freeing the cache"
sim_calls >"$T/calls"
printf '%s\n' "alloc 0x500000000000 20971520 0" "alloc 0x500001400000 20971520 0" \
	"alloc 0x0 2097152 2" "free 0x500000000000" "alloc 0x500000000000 2097152 0" |
	diff -u - "$T/calls" || fail "CUDA calls of the retry"

# --- out of memory with the cache in pieces (py-oom.py) ------------------------
cat >"$T/oom.py" <<'PY'
import runpy, sys, torch
torch.cuda.memory._record_memory_history(max_entries=1000)
torch._C._cuda_attach_out_of_memory_observer(
    lambda *a: print("observer device=%d alloc=%d device_total=%d device_free=%d" % a))
sys.argv = [sys.argv[1]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as e:
    print("exit=%s" % e.code)
trace = torch.cuda.memory._snapshot()["device_traces"][0]
print("actions:", " ".join(sorted(set(e["action"] for e in trace))))
oom = [e for e in trace if e["action"] == "oom"]
print("oom size=%d device_free=%d addr=%s frame=%s:%d" % (oom[0]["size"], oom[0]["device_free"],
      "addr" in oom[0], oom[0]["frames"][0]["name"], oom[0]["frames"][0]["line"]))
PY
SIMCUDA_MEM=380M pyd "$T/oom.py" "$TD/py-oom.py" >"$T/out" 2>"$T/err" || fail "py-oom.py failed: $(cat "$T/err")"
sed 's/^\(oom: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0\).*/\1/' "$T/out" >"$T/got"
cat >"$T/want" <<EOF
observer device=0 alloc=20971520 device_total=398458880 device_free=0
oom: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0
allocated=41943040 reserved=83886080 inactive_split=41943040 num_alloc_retries=1 num_ooms=1
exit=0
actions: alloc free_completed free_requested oom segment_alloc
oom size=8388608 device_free=0 addr=False frame=main:$(line "$TD/py-oom.py" oom)
EOF
diff -u "$T/want" "$T/got" || fail "py-oom.py's out-of-memory error"
# Four segments, then the 20 MiB segment tried twice (first try and retry).
expect_eq "$(sim_calls | awk '$3 == 20971520 { print $4 }' | sort | uniq -c | tr -s ' ' | tr '\n' ,)" \
	" 4 0, 2 2," "segment allocations of py-oom.py (ok, failed)"

# --- the ring buffer, the "snapshot" entry, frames, time_us -----------------
# Five entries fill it; each _snapshot() reads it, then adds a "snapshot"
# entry (size: the active bytes) that evicts the oldest, as the free of x1
# evicts two more. Offsets are in 512-byte blocks from x1.
cat >"$T/ring.py" <<'PY'
import time, torch
torch.cuda.memory._record_memory_history(max_entries=5)
def alloc_one():
    return torch.empty(512, dtype=torch.uint8, device="cuda")  # L:alloc_one
t0 = time.time_ns() // 1000
x1 = alloc_one()  # L:x1
x2 = alloc_one()
x3 = alloc_one()
x4 = alloc_one()
base = x1.data_ptr()
def show(what):
    trace = torch.cuda.memory._snapshot()["device_traces"][0]
    print(what + ":", " ".join("%s@%d/%d" % (e["action"], (e["addr"] - base) // 512 if e["addr"] else -1,
                                             e["size"]) for e in trace))
    return trace
full = show("full")
del x1  # L:del
t1 = time.time_ns() // 1000
trace = show("wrapped")
show("again")
fr = [e for e in trace if e["action"] == "free_requested"][0]
print("free frame:", fr["frames"][0]["line"], fr["frames"][0]["name"])
al = [e for e in full if e["action"] == "alloc"][0]
print("alloc frames:", " ".join("%s:%d" % (f["name"], f["line"]) for f in al["frames"]))
times = [e["time_us"] for e in trace]
print("time_us in [t0, t1]:", all(t0 <= t <= t1 for t in times), "ordered:", times == sorted(times),
      "monotonic clock would be:", abs(times[0] - time.monotonic_ns() // 1000) < 10**6)
PY
pyd "$T/ring.py" >"$T/out" 2>"$T/err" || fail "ring.py failed: $(cat "$T/err")"
cat >"$T/want" <<EOF
full: segment_alloc@0/2097152 alloc@0/512 alloc@1/512 alloc@2/512 alloc@3/512
wrapped: alloc@2/512 alloc@3/512 snapshot@-1/2048 free_requested@0/512 free_completed@0/512
again: alloc@3/512 snapshot@-1/2048 free_requested@0/512 free_completed@0/512 snapshot@-1/1536
free frame: $(line "$T/ring.py" del) <module>
alloc frames: alloc_one:$(line "$T/ring.py" alloc_one) <module>:$(line "$T/ring.py" x1)
time_us in [t0, t1]: True ordered: True monotonic clock would be: False
EOF
diff -u "$T/want" "$T/out" || fail "the history's ring buffer"

# --- the three programs, on their own -------------------------------------------
pyd "$TD/py-steps.py" >"$T/out" 2>"$T/err" || fail "py-steps.py failed: $(cat "$T/err")"
printf '%s\n' "allocated_peak=$((25 * MiB)) reserved_peak=$((36 * MiB))" \
	"allocated=$((16 * MiB)) reserved=$((36 * MiB)) inactive_split=0" | diff -u - "$T/out" || fail "py-steps.py"
pyd "$TD/py-steps.py" 7 >"$T/out" 2>"$T/err" || fail "py-steps.py 7 failed: $(cat "$T/err")"
expect_eq "$(head -n 1 "$T/out")" "allocated_peak=$((28 * MiB)) reserved_peak=$((40 * MiB))" "py-steps.py 7"
pyd "$TD/py-spawn.py" >"$T/out" 2>"$T/err" || fail "py-spawn.py failed: $(cat "$T/err")"
sed 's/pid=[0-9]*/pid=N/' "$T/out" >"$T/got"
printf '%s\n' "worker pid=N allocated_peak=6815744 reserved_peak=23068672" \
	"parent pid=N allocated_peak=4194304 reserved_peak=20971520" | diff -u - "$T/got" || fail "py-spawn.py"
[ "$(awk '{ print $2 }' "$T/out" | sort -u | wc -l)" = 2 ] || fail "py-spawn.py: one process, not two"

# --- under memtrace run: the segments are the traced calls --------------------
cat >"$T/steps.py" <<'PY'
import runpy, sys, torch
torch.cuda.memory._record_memory_history(max_entries=1000)
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
torch.cuda.empty_cache()
s = torch.cuda.memory._snapshot()
with open(__file__ + ".segments", "w") as f:
    for e in s["device_traces"][0]:
        if e["action"] == "segment_alloc":
            f.write("alloc device 0 %#x %d 0\n" % (e["addr"], e["size"]))
        elif e["action"] == "segment_free":
            f.write("free %#x 0\n" % e["addr"])
    for seg in s["segments"]:
        f.write("live %#x %d\n" % (seg["address"], seg["total_size"]))
PY
rm -f "$T/calls.log"
MEMTRACE_TORCH=0 PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 traced python3 "$T/steps.py" "$TD/py-steps.py" \
	>"$T/out" 2>"$T/err" || fail "py-steps.py under memtrace run failed: $(cat "$T/err")"
expect_eq "$(head -n 1 "$T/out")" "allocated_peak=$((25 * MiB)) reserved_peak=$((36 * MiB))" "py-steps.py traced"
dump_events "$T/trace.bin" >"$T/traced"
grep -v '^live' "$T/steps.py.segments" | sort >"$T/history"
diff -u "$T/history" "$T/traced" || fail "the trace's calls are not the double's segment history"
# The live segments of the snapshot: allocated in the trace and never freed.
awk '$1 == "alloc" { live[$4] = $5 } $1 == "free" { delete live[$2] }
     END { for (a in live) print "live", a, live[a] }' "$T/traced" | sort >"$T/live.trace"
grep '^live' "$T/steps.py.segments" | sort | diff -u - "$T/live.trace" || fail "live segments"
expect_eq "$(grep -c '^live' "$T/live.trace")" 3 "live segments at exit (12 MiB and two small ones)"
expect_eq "$(count '^free' "$T/traced")" 1 "segments freed (the 20 MiB one, by empty_cache)"
same_events "$T/trace.bin" "$T/calls.log"
