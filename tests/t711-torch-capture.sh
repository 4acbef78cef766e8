#!/bin/sh
# t711-torch-capture: PyTorch's allocator history reaches the trace as
# fw_event records, on the test double of torch: exactly the double's own
# counts, segment addresses equal to the cudaMalloc calls, times on the
# trace's clock; an OOM with its request; events drained at SIGTERM (a
# handler of the program's chained, SIG_IGN left alone), periodically, and
# when the ring buffer wrapped a "dropped" note with the exact count; a
# spawned worker's own events in its own trace; --torch-snapshot.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
DOUBLE=$ROOT/tests/torchdouble
[ -f "$DOUBLE/py-steps.py" ] || skip "no torch test double"
cd "$T" || exit 1
export PYTHONPATH=$DOUBLE

# counts.py SCRIPT ARGS: runs SCRIPT as __main__ (its globals kept alive),
# then prints the double's own counts.
cat >counts.py <<'PY'
import runpy, sys
import torch
path = sys.argv[1]
sys.argv = sys.argv[1:]
g = runpy.run_path(path, run_name="__main__")
s = torch.cuda.memory_stats()
print("counts alloc=%d free=%d segment=%d" % (
    s["allocation.all.allocated"], s["allocation.all.freed"], s["segment.all.allocated"]))
PY

fw_count() { # ACTION DUMP
	count "^fw_event .* action=$1 " "$2"
}

# py-steps.py: 17 tensors (weights, 4 steps of 3 activations and one
# history tensor), 12 freed, 4 segments; all of it in the trace.
traced python3 counts.py "$DOUBLE/py-steps.py" >out 2>err || fail "py-steps.py: $(cat err)"
expect_eq "$(grep '^counts' out)" "counts alloc=17 free=12 segment=4" "the double's own counts"
"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed"
expect_eq "$(fw_count alloc dump.txt)" 17 "fw alloc events"
expect_eq "$(fw_count free_requested dump.txt)" 12 "fw free_requested events"
expect_eq "$(fw_count free_completed dump.txt)" 12 "fw free_completed events"
expect_eq "$(fw_count segment_alloc dump.txt)" 4 "fw segment_alloc events"
expect_eq "$(count '^fw_info .*dropped=' dump.txt)" 0 "dropped notes"
# The segments are the cudaMalloc calls, address and size.
awk '$1 == "fw_event" && $4 == "action=segment_alloc" { print $5, $6 }' dump.txt |
	sed 's/addr=//; s/size=//' | sort >seg.fw
awk '$1 == "alloc" && / api=cudaMalloc / {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	print f["addr"], f["bytes"] }' dump.txt | sort >seg.cuda
expect_eq "$(cat seg.fw)" "$(cat seg.cuda)" "segment_alloc against cudaMalloc"
expect_eq "$(wc -l <seg.cuda)" 4 "cudaMalloc calls"
# The clock: each segment_alloc comes after its cudaMalloc, and close.
awk '$1 == "alloc" && / api=cudaMalloc / { sub(/time=\+/, "", $2); sub(/addr=/, "", $7); t[$7] = $2 }
     $1 == "fw_event" && $4 == "action=segment_alloc" {
	sub(/time=\+/, "", $2); sub(/addr=/, "", $5)
	d = $2 - t[$5]; if (d < -1000 || d > 100000000) print "skew", $5, d }' dump.txt >skew
expect_eq "$(cat skew)" "" "segment_alloc times against cudaMalloc times (ns)"
# Each alloc's stack is the Python line that made the tensor.
leak=$(grep -n '# L:leak$' "$DOUBLE/py-steps.py" | cut -d: -f1)
id=$(awk '$1 == "fw_event" && $4 == "action=alloc" && $6 == "size=1048576" { sub(/stack=/, "", $NF); print $NF; exit }' dump.txt)
grep -q "^fw_stack id=$id frames=\"$DOUBLE/py-steps.py:$leak step < " dump.txt ||
	fail "stack of the 1 MiB tensor: $(grep "^fw_stack id=$id " dump.txt)"

# --torch-snapshot keeps PyTorch's own snapshot beside the trace.
rm -f trace.bin
sim "$MEMTRACE" run --no-summary --torch-snapshot -o "$T/snap.bin" -- python3 "$DOUBLE/py-steps.py" \
	>out 2>err || fail "py-steps.py --torch-snapshot: $(cat err)"
set -- snap.*.torch.pickle
[ -f "$1" ] || fail "no snap.PID.torch.pickle: $(ls)"
expect_eq "$(python3 -c 'import pickle, sys; s = pickle.load(open(sys.argv[1], "rb"))
print(len(s["segments"]), sum(e["action"] == "alloc" for e in s["device_traces"][0]))' "$1")" "4 17" \
	"segments and allocs in the snapshot"

# py-oom.py: the oom event with the (rounded) request and PyTorch's device free.
SIMCUDA_MEM=380M traced python3 "$DOUBLE/py-oom.py" >out 2>err || fail "py-oom.py: $(cat err)"
"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed"
expect_eq "$(count '^fw_event .* action=oom addr=0x0 size=8388608 stream=0x0 x=0 ' dump.txt)" 1 "the oom event"
expect_eq "$(fw_count alloc dump.txt)" 16 "allocs before the oom"

# SIGTERM: what was allocated before it is in the trace, whether the signal
# kills (default action), reaches the program's own handler, or is ignored.
cat >term.py <<'PY'
import os, signal, sys, time
mode = sys.argv[1]
if mode == "handler":
    def h(sig, frame):
        print("program's handler", sig, flush=True)
        sys.exit(3)
    signal.signal(signal.SIGTERM, h)
elif mode == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
import torch
ts = [torch.empty(4096, dtype=torch.uint8, device="cuda") for _ in range(7)]
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.2)
print("survived", flush=True)
os._exit(0)     # no atexit: only the SIGTERM drain could have kept the events
PY
for mode in default handler ignore; do
	traced python3 term.py $mode >out 2>err
	rc=$?
	case $mode in
	default) expect_eq "$rc $(cat out)" "143 " "SIGTERM, default action" ;;
	handler) expect_eq "$rc $(cat out)" "3 program's handler 15" "SIGTERM, the program's handler" ;;
	ignore) expect_eq "$rc $(cat out)" "0 survived" "SIGTERM, ignored" ;;
	esac
	"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed ($mode)"
	if [ $mode = ignore ]; then want=0; else want=7; fi
	expect_eq "$(fw_count alloc dump.txt)" $want "allocs drained at SIGTERM ($mode)"
done

# The periodic drain: events reach the trace with no exit drain.
cat >periodic.py <<'PY'
import os, time
import torch
ts = [torch.empty(4096, dtype=torch.uint8, device="cuda") for _ in range(5)]
time.sleep(1.0)
os._exit(0)
PY
MEMTRACE_TORCH_DRAIN_S=0.1 traced python3 periodic.py >out 2>err || fail "periodic.py: $(cat err)"
"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed"
expect_eq "$(fw_count alloc dump.txt)" 5 "allocs drained by the periodic drain"

# A ring buffer of 16 entries: 40 allocs and their frees; the last 16
# entries hold the last 5 allocs, so 35 are said dropped.
cat >wrap.py <<'PY'
import torch
for i in range(40):
    x = torch.empty(512, dtype=torch.uint8, device="cuda")
    del x
PY
MEMTRACE_TORCH_MAX_ENTRIES=16 traced python3 wrap.py >out 2>err || fail "wrap.py: $(cat err)"
"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed"
expect_eq "$(fw_count alloc dump.txt)" 5 "allocs kept by a 16-entry history"
expect_eq "$(count '^fw_info .*dropped=35\\ndevice=0\\n' dump.txt)" 1 "the dropped note"
"$MEMTRACE" report --no-db --json trace.bin >wrap.json || fail "report of wrap.py failed"
expect_eq "$(python3 -c 'import json; print(json.load(open("wrap.json"))["framework"]["dropped_events"])')" 35 \
	"the report counts the dropped events"

# py-spawn.py: the spawned worker writes its own trace with its own events.
traced python3 "$DOUBLE/py-spawn.py" >out 2>err || fail "py-spawn.py: $(cat err)"
wpid=$(sed -n 's/^worker pid=\([0-9]*\) .*/\1/p' out)
[ -n "$wpid" ] || fail "no worker line: $(cat out)"
"$MEMTRACE" dump "trace.$wpid.bin" >wdump.txt || fail "no trace of the worker: $(ls)"
"$MEMTRACE" dump trace.bin >dump.txt || fail "dump failed"
expect_eq "$(fw_count alloc wdump.txt) $(fw_count free_completed wdump.txt) $(fw_count segment_alloc wdump.txt)" \
	"2 1 2" "the worker's allocs, frees and segments"
expect_eq "$(count '^fw_event .* action=alloc .* size=6291456 ' wdump.txt)" 1 "the worker's 6 MiB tensor"
expect_eq "$(fw_count alloc dump.txt) $(fw_count free_completed dump.txt)" "1 1" "the parent's own events"
exit 0
