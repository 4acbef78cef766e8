#!/bin/sh
# t300-sample-leak: samples/leak.c under memtrace holds the figures worked
# out in samples/README.md: 41 cudaMalloc, 31 cudaFree, a 112 MiB peak, and
# 20 MiB live at exit in 10 blocks from a single call site (the leak).
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"

traced "$SAMPLES/leak" >"$T/out" 2>"$T/err" || fail "leak failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"

MiB=1048576
expect_eq "$(count '^alloc .* dev=0 api=cudaMalloc kind=device .* result=0 ' "$T/dump")" 41 "cudaMalloc"
expect_eq "$(count '^free .* api=cudaFree .* result=0 ' "$T/dump")" 31 "cudaFree"
expect_eq "$(count '^(alloc|free) .* result=[1-9]' "$T/dump")" 0 "failed calls"

# The live device bytes over time, replayed from the dump: peak and exit.
live=$(awk '
	{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	$1 == "alloc" && f["result"] == "0" { live[f["addr"]] = f["bytes"]; site[f["addr"]] = f["stack"]
		cur += f["bytes"]; if (cur > peak) peak = cur }
	$1 == "free" && f["result"] == "0" && (f["addr"] in live) { cur -= live[f["addr"]]; delete live[f["addr"]] }
	END { n = 0; for (a in live) { s[site[a]] += live[a]; c[site[a]]++ }
		for (k in s) { n++; sb = s[k]; sc = c[k] }
		print peak, cur, n, sc, sb }' "$T/dump")
expect_eq "$live" "$((112 * MiB)) $((20 * MiB)) 1 10 $((20 * MiB))" \
	"peak, live at exit, leaking sites, blocks and bytes of the leaking site"

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
expect_eq "$(rj '"%d %d %s" % (r["events"]["total"], r["events"]["failed"], sorted(r["events"]["by_api"].items()))')" \
	"72 0 [('cudaFree', 31), ('cudaMalloc', 41)]" "report: events"
expect_eq "$(rj "$DEV_FIGS")" "$((112 * MiB)) $((112 * MiB)) 0 $((20 * MiB)) $((300 * MiB))" \
	"report: peak reserved, allocated, cached, live at exit, untraced"
expect_eq "$(rj '[(l["reasons"], l["bytes"], l["count"], l["frames"][0]["function"]) for l in r["leaks"]]')" \
	"[(['live_at_exit', 'growing'], $((20 * MiB)), 10, 'keep_loss')]" "report: leak candidates (one site, both reasons)"
# device used is a sample: the gradients of step 10 (the peak) grow the
# device by more than 1% of its used memory, so they are owed a sample,
# taken before the first free after them (5 ms later: past the 1 ms rate
# limit): device used at the peak is measured at the peak's state, 300 MiB
# context + 112 MiB, as samples/README.md works it out. The report says
# when it was taken, in JSON and in text.
expect_eq "$(rj 'd[0]["device_used_bytes_at_peak"]')" "$((412 * MiB))" "report: device used at the peak"
sample_t=$(rj 'd[0]["device_used_sample_time_ns"]')
grep -q "^meminfo time=+$sample_t " "$T/dump" || fail "report: device used at +$sample_t ns is no sample of the trace"
expect_eq "$(rj 'd[0]["device_used_sample_time_ns"] >= d[0]["peak_reserved_time_ns"]')" True \
	"report: device used sampled at or after the peak"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/report.txt" || fail "report failed"
ago=$(rj '"%.1f ms" % ((d[0]["device_used_sample_time_ns"] - d[0]["peak_reserved_time_ns"]) / 1e6)')
expect_eq "$(grep -A1 "^  device used " "$T/report.txt")" "  device used 412 MiB of 80.0 GiB (sampled $ago after the peak)
    of which 300 MiB untraced (CUDA context, kernels, libraries, untraced processes)" \
	"report: the sample's age beside device used"
