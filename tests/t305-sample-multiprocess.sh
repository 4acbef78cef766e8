#!/bin/sh
# t305-sample-multiprocess: samples/multiprocess.c on two simulated GPUs:
# the launcher allocates nothing and writes no trace; each exec'd worker
# writes its own, with its rank and world size, on its own device: rank 0
# peaks at 48 MiB on device 0, rank 1 at 80 MiB on device 1 (samples/README.md).
# With one device the launcher stops with a message and status 1.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/multiprocess" ] || skip "no $SAMPLES/multiprocess (make tests-build)"
MiB=1048576

SIMCUDA_DEVICES=2 traced "$SAMPLES/multiprocess" >"$T/out" 2>"$T/err" ||
	fail "multiprocess failed: $(cat "$T/err")"
[ -e "$T/trace.bin" ] && fail "the launcher wrote a trace"
expect_eq "$(ls "$T" | grep -cE '^trace\.[0-9]+\.bin$')" 2 "worker traces"
for f in "$T"/trace.*.bin; do
	"$MEMTRACE" dump "$f" >"$T/dump" || fail "dump $f failed"
	rank=$(sed -n 's/^process .* rank=\([0-9-]*\) local_rank=\([0-9-]*\) world_size=\([0-9-]*\) .*/\1 \2 \3/p' "$T/dump")
	r=${rank%% *}
	expect_eq "$rank" "$r $r 2" "rank, local rank, world size in $f"
	pid=$(basename "$f" .bin); pid=${pid#trace.}
	same_events "$f" "$T/calls.log" "$pid"
	expect_eq "$(awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
		$1 == "alloc" && f["result"] == "0" { n++; devs[f["dev"]]; live[f["addr"]] = f["bytes"]; cur += f["bytes"]; if (cur > peak) peak = cur }
		$1 == "free" && f["result"] == "0" && (f["addr"] in live) { m++; cur -= live[f["addr"]]; delete live[f["addr"]] }
		END { for (d in devs) dl = dl d; print dl, n, m, peak, cur }' "$T/dump")" \
		"$r 4 4 $(((r + 1) * 32 * MiB + 16 * MiB)) 0" "rank $r: device, allocs, frees, peak, live at exit"
	echo "$r" >>"$T/ranks"
done
expect_eq "$(sort "$T/ranks" | tr '\n' ' ')" "0 1 " "ranks traced"

# --- the same figures in `memtrace report --json` (read with python3) ----
command -v python3 >/dev/null 2>&1 || { echo "no python3: the report's figures are not checked"; exit 0; }
"$MEMTRACE" report --no-db --json "$T"/trace.*.bin >"$T/report.json" 2>"$T/report.err" ||
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
expect_eq "$(rj 'sorted((p["rank"], p["local_rank"], p["world_size"], p["peak_reserved_bytes"]) for p in r["processes"])')" \
	"[(0, 0, 2, $((48 * MiB))), (1, 1, 2, $((80 * MiB)))]" "report: processes"
expect_eq "$(rj '" ".join(str(d[0][k]) for k in ("peak_reserved_bytes", "left_at_exit_bytes", "untraced_bytes_at_peak"))')" \
	"$((48 * MiB)) 0 $((300 * MiB))" "report: device 0"
expect_eq "$(rj '" ".join(str(d[1][k]) for k in ("peak_reserved_bytes", "left_at_exit_bytes", "untraced_bytes_at_peak"))')" \
	"$((80 * MiB)) 0 $((300 * MiB))" "report: device 1"

# With one device the launcher stops before starting any worker.
rm -f "$T"/trace*.bin
traced "$SAMPLES/multiprocess" >"$T/out" 2>"$T/err"
expect_eq "$?" 1 "exit status with one device"
expect_eq "$(cat "$T/err" | grep -v '^memtrace:')" \
	"multiprocess: 2 workers need 2 devices, found 1 (on the simulated GPU set SIMCUDA_DEVICES=2)" "message with one device"

