#!/bin/sh
# t304-sample-pinned-expandable: samples/pinned-expandable.c: 12 MiB of
# pinned host memory (no device), a 160 MiB address reservation (no
# memory), and an expandable segment that grows by three 20 MiB pages
# (60 MiB, the device peak) through driver entry points, shrinks to one
# and is released, as samples/README.md works out.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/pinned-expandable" ] || skip "no $SAMPLES/pinned-expandable (make tests-build)"
MiB=1048576

traced "$SAMPLES/pinned-expandable" >"$T/out" 2>"$T/err" || fail "pinned-expandable failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
expect_eq "$(count '^alloc .* dev=-1 api=cudaMallocHost kind=host .* bytes=8388608 result=0 ' "$T/dump")" 1 "cudaMallocHost"
expect_eq "$(count '^alloc .* dev=-1 api=cudaHostAlloc kind=host .* bytes=4194304 result=0 ' "$T/dump")" 1 "cudaHostAlloc"
expect_eq "$(count '^free .* api=cudaFreeHost kind=host .* result=0 ' "$T/dump")" 2 "cudaFreeHost"
expect_eq "$(count '^alloc .* api=cuMemAddressReserve kind=vmm_reserve .* bytes=167772160 result=0 ' "$T/dump")" 1 "reservation"
expect_eq "$(count '^alloc .* dev=0 api=cuMemCreate kind=vmm_phys .* bytes=20971520 result=0 ' "$T/dump")" 3 "cuMemCreate"
expect_eq "$(count '^alloc .* api=cuMemMap kind=vmm_map .* bytes=20971520 result=0 ' "$T/dump")" 3 "cuMemMap"
expect_eq "$(count '^free .* api=cuMemUnmap kind=vmm_map .* result=0 ' "$T/dump")" 3 "cuMemUnmap"
expect_eq "$(count '^free .* api=cuMemRelease kind=vmm_phys .* result=0 ' "$T/dump")" 3 "cuMemRelease"
expect_eq "$(count '^free .* api=cuMemAddressFree kind=vmm_reserve .* result=0 ' "$T/dump")" 1 "cuMemAddressFree"

# Physical device memory over time (by handle) and pinned host memory.
expect_eq "$(awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
	$1 == "alloc" && f["result"] == "0" && (f["kind"] == "vmm_phys" || f["kind"] == "host") {
		k = f["kind"]; live[f["addr"]] = f["bytes"]; kind[f["addr"]] = k
		cur[k] += f["bytes"]; if (cur[k] > peak[k]) peak[k] = cur[k]; if (k == "vmm_phys") print "phys", cur[k] }
	$1 == "free" && (f["addr"] in live) { k = kind[f["addr"]]; cur[k] -= live[f["addr"]]; delete live[f["addr"]]
		if (k == "vmm_phys") print "phys", cur[k] }
	END { print "peaks", peak["vmm_phys"], peak["host"], "exit", cur["vmm_phys"] + cur["host"] }' "$T/dump" | tr '\n' ' ')" \
	"phys $((20 * MiB)) phys $((40 * MiB)) phys $((60 * MiB)) phys $((40 * MiB)) phys $((20 * MiB)) phys 0 peaks $((60 * MiB)) $((12 * MiB)) exit 0 " \
	"device pages over time, device and pinned peaks, live at exit"

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
expect_eq "$(rj '"%d %d" % (r["events"]["total"], r["events"]["failed"])')" "18 0" "report: events"
expect_eq "$(rj '" ".join(str(d[0][k]) for k in ("peak_reserved_bytes", "left_at_exit_bytes", "untraced_bytes_at_peak"))')" \
	"$((60 * MiB)) 0 $((300 * MiB))" "report: device peak, live at exit, untraced"
expect_eq "$(rj '"%d %d" % (r["processes"][0]["host_pinned_peak_bytes"], r["processes"][0]["host_pinned_live_at_exit_bytes"])')" \
	"$((12 * MiB)) 0" "report: pinned host peak and live at exit"
expect_eq "$(rj 'r["leaks"]')" "[]" "report: leak candidates"
