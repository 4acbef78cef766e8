#!/bin/sh
# t301-sample-fragmentation: samples/fragmentation.c on a 400 MiB simulated
# GPU (300 MiB context + 100 MiB) runs out of memory with 52 MiB free in
# total, as samples/README.md works out: five 20 MiB segments (the 100 MiB
# peak), a failed 30 MiB cudaMalloc, the one wholly free segment given
# back, a second failure, then the step dropped, four segments given back
# and the retry succeeding. With no SIMCUDA_MEM (80 GiB) a ballast takes
# all but 104 MiB first and the same story follows.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/fragmentation" ] || skip "no $SAMPLES/fragmentation (make tests-build)"
MiB=1048576

# calls DUMP: the allocation calls in order, "alloc BYTES RESULT" or
# "free BYTES" (the size of the allocation the free ends).
calls() {
	awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	$1 == "alloc" { print "alloc", f["bytes"], f["result"]; if (f["result"] == "0") size[f["addr"]] = f["bytes"] }
	$1 == "free" { print "free", size[f["addr"]] }
	$1 == "meminfo" { print "meminfo free", f["free"] }' "$1"
}

SIMCUDA_MEM=400M traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" ||
	fail "fragmentation failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
calls "$T/dump" >"$T/calls"
S=$((20 * MiB)) R=$((30 * MiB))
# meminfo: the device sampled when first used, after each failure, and at
# the retry's 30 MiB (more than 1% of the device's used memory allocated
# since the last sample, 1 ms or more after it)
cat >"$T/calls.want" <<WANT
alloc $S 0
meminfo free $((80 * MiB))
alloc $S 0
alloc $S 0
alloc $S 0
alloc $S 0
alloc $R 2(runtime)
meminfo free 0
free $S
alloc $R 2(runtime)
meminfo free $((20 * MiB))
free $S
free $S
free $S
free $S
alloc $R 0
meminfo free $((70 * MiB))
free $R
WANT
diff -u "$T/calls.want" "$T/calls" || fail "allocation calls differ from samples/README.md"

# The peak: all five segments, 100 MiB; nothing live at exit.
expect_eq "$(awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	$1 == "alloc" && f["result"] == "0" { live[f["addr"]] = f["bytes"]; cur += f["bytes"]; if (cur > peak) peak = cur }
	$1 == "free" && (f["addr"] in live) { cur -= live[f["addr"]]; delete live[f["addr"]] }
	END { print peak, cur }' "$T/dump")" "$((100 * MiB)) 0" "peak and live at exit"

# What the program says about it.
grep -q 'CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has 20.00 MiB free' "$T/out" ||
	fail "OOM message: $(cat "$T/out")"
grep -q '52 MiB is free in total, but in pieces' "$T/out" || fail "free total: $(cat "$T/out")"
grep -q 'cache emptied (4 segments given back)' "$T/out" || fail "empty_cache: $(cat "$T/out")"

# A big device: the ballast leaves 104 MiB, the OOM still happens.
rm -f "$T/trace.bin" "$T/calls.log"
traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" || fail "fragmentation with a ballast failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
calls "$T/dump" | grep -v meminfo >"$T/calls"
{
	echo "alloc $(((81920 - 300 - 104) * MiB)) 0"
	grep -v meminfo "$T/calls.want"
	echo "free $(((81920 - 300 - 104) * MiB))"
} >"$T/calls.want2"
diff -u "$T/calls.want2" "$T/calls" || fail "allocation calls with a ballast differ"
grep -q 'GPU 0 has 24.00 MiB free' "$T/out" || fail "OOM message with a ballast: $(cat "$T/out")"

# --- the same figures in `memtrace report --json` (read with python3) ----
command -v python3 >/dev/null 2>&1 || { echo "no python3: the report's figures are not checked"; exit 0; }
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/report.json" 2>"$T/report.err" ||
	fail "report failed: $(cat "$T/report.err")"
# rj EXPR: EXPR in python, with r the report and d its devices by index
rj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); d = {x["device"]: x for x in r["devices"]}
print(eval(sys.argv[2]))' "$T/report.json" "$1"
}
# DEV_FIGS: the figures of device 0 this test checks, in this order (not
# device_used_bytes_at_peak: a sample of cuMemGetInfo, taken when the
# recorder samples, not at the peak; what is untraced is exact here)
DEV_FIGS='" ".join(str(d[0][k]) for k in ("peak_reserved_bytes", "peak_allocated_bytes", "cached_bytes_at_peak", "left_at_exit_bytes", "untraced_bytes_at_peak"))'
# (the run with the ballast is the last one traced: figures of samples/README.md for it)
B_=$(((81920 - 300 - 104) * MiB))
expect_eq "$(rj '"%d %d" % (r["events"]["total"], r["events"]["failed"])')" "16 2" "report: events"
expect_eq "$(rj '[(f["api"], f["requested_bytes"], f["error_name"], f["reserved_bytes"], f["device_free_bytes"]) for f in r["failures"]]')" \
	"[('cudaMalloc', $((30 * MiB)), 'cudaErrorMemoryAllocation', $((B_ + 100 * MiB)), $((4 * MiB))), ('cudaMalloc', $((30 * MiB)), 'cudaErrorMemoryAllocation', $((B_ + 80 * MiB)), $((24 * MiB)))]" \
	"report: failures with a ballast"

# The run of samples/README.md, on a 400 MiB device.
rm -f "$T/trace.bin" "$T/calls.log"
SIMCUDA_MEM=400M traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" || fail "fragmentation failed: $(cat "$T/err")"
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/report.json" 2>"$T/report.err" ||
	fail "report failed: $(cat "$T/report.err")"
expect_eq "$(rj '"%d %d %s" % (r["events"]["total"], r["events"]["failed"], sorted(r["events"]["by_api"].items()))')" \
	"14 2 [('cudaFree', 6), ('cudaMalloc', 8)]" "report: events"
expect_eq "$(rj "$DEV_FIGS")" "$((100 * MiB)) $((100 * MiB)) 0 0 $((300 * MiB))" \
	"report: peak reserved, allocated, cached, live at exit, untraced"
expect_eq "$(rj '[(f["api"], f["requested_bytes"], f["error_name"], f["reserved_bytes"], f["device_free_bytes"], f["frames"][0]["function"]) for f in r["failures"]]')" \
	"[('cudaMalloc', $((30 * MiB)), 'cudaErrorMemoryAllocation', $((100 * MiB)), 0, 'segment_new'), ('cudaMalloc', $((30 * MiB)), 'cudaErrorMemoryAllocation', $((80 * MiB)), $((20 * MiB)), 'segment_new')]" \
	"report: failures"
expect_eq "$(rj '[(o["requested_bytes"], o["frees"], o["freed_bytes"], o["retry_bytes"], o["retry_result"]) for o in r["oom_retries"]]')" \
	"[($((30 * MiB)), 1, $((20 * MiB)), $((30 * MiB)), 2), ($((30 * MiB)), 4, $((80 * MiB)), $((30 * MiB)), 0)]" \
	"report: out-of-memory retries"
expect_eq "$(rj 'r["leaks"]')" "[]" "report: leak candidates"
