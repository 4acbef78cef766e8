#!/bin/sh
# t302-sample-activations: samples/activations.c keeps 8 activations of
# 16 MiB for the backward pass (peak 176 MiB, 17 cudaMalloc); with
# --checkpoint it keeps 2 and recomputes 3 per segment (peak 128 MiB,
# 23 cudaMalloc): the 48 MiB drop of samples/README.md; the device used
# at the peak, 476 and 428 MiB, is measured there.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/activations" ] || skip "no $SAMPLES/activations (make tests-build)"
MiB=1048576

# figures DUMP: "ALLOCS FREES PEAK LIVE_AT_EXIT"
figures() {
	awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	$1 == "alloc" && f["result"] == "0" { n++; live[f["addr"]] = f["bytes"]; cur += f["bytes"]; if (cur > peak) peak = cur }
	$1 == "free" && f["result"] == "0" && (f["addr"] in live) { m++; cur -= live[f["addr"]]; delete live[f["addr"]] }
	END { print n, m, peak, cur }' "$1"
}

for mode in plain checkpoint; do
	rm -f "$T/trace.bin" "$T/calls.log"
	arg=; [ $mode = checkpoint ] && arg=--checkpoint
	traced "$SAMPLES/activations" $arg >"$T/out" 2>"$T/err" || fail "activations $arg failed: $(cat "$T/err")"
	same_events "$T/trace.bin" "$T/calls.log"
	"$MEMTRACE" dump "$T/trace.bin" >"$T/dump.$mode" || fail "dump failed"
	expect_eq "$(count 'result=[1-9]' "$T/dump.$mode")" 0 "$mode: failed calls"
done
expect_eq "$(figures "$T/dump.plain")" "17 17 $((176 * MiB)) 0" "without checkpointing: allocs, frees, peak, exit"
expect_eq "$(figures "$T/dump.checkpoint")" "23 23 $((128 * MiB)) 0" "with checkpointing: allocs, frees, peak, exit"

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
# DEV_FIGS: the figures of device 0 this test checks, in this order. Device
# used at the peak is a cuMemGetInfo sample: the recorder samples when a
# device's allocations grew by 1% of its used memory (at most once a
# millisecond; one held back is taken before the thread's next free), so
# it is measured at the peak's state, 300 MiB context + the peak, as
# samples/README.md works it out (with --checkpoint the peak's gradient
# comes right after the 3 recomputed activations: its sample is the one
# taken before the free 2 ms later)
DEV_FIGS='" ".join(str(d[0][k]) for k in ("peak_reserved_bytes", "peak_allocated_bytes", "cached_bytes_at_peak", "left_at_exit_bytes", "untraced_bytes_at_peak", "device_used_bytes_at_peak"))'
for mode in plain checkpoint; do
	rm -f "$T/trace.bin"
	arg=; [ $mode = checkpoint ] && arg=--checkpoint
	traced "$SAMPLES/activations" $arg >"$T/out" 2>"$T/err" || fail "activations $arg failed: $(cat "$T/err")"
	"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/report.json" 2>"$T/report.err" ||
		fail "report failed: $(cat "$T/report.err")"
	p=176; n=17; [ $mode = checkpoint ] && p=128 && n=23
	expect_eq "$(rj '"%d %d %s" % (r["events"]["total"], r["events"]["failed"], sorted(r["events"]["by_api"].items()))')" \
		"$((2 * n)) 0 [('cudaFree', $n), ('cudaMalloc', $n)]" "report ($mode): events"
	expect_eq "$(rj "$DEV_FIGS")" "$((p * MiB)) $((p * MiB)) 0 0 $((300 * MiB)) $(((300 + p) * MiB))" \
		"report ($mode): peak reserved, allocated, cached, live at exit, untraced, device used"
	expect_eq "$(rj 'd[0]["device_used_sample_time_ns"] >= d[0]["peak_reserved_time_ns"]')" True \
		"report ($mode): device used sampled at or after the peak (before anything changed)"
	expect_eq "$(rj 'r["leaks"]')" "[]" "report ($mode): leak candidates"
done
