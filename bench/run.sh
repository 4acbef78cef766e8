#!/bin/sh
# bench/run.sh - `make bench`: measures memtrace on the simulated driver and
# writes bench/RESULTS.md. Each figure is the median of ROUNDS runs with min
# and max; every traced run is paired with an untraced run in the same round
# and the overhead is taken from that pair, since these machines are noisy.
#   ROUNDS=5 PAIRS=200000 bench/run.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
SIM=$B/simcuda/driver:$B/simcuda/runtime
ROUNDS=${ROUNDS:-5}
PAIRS=${PAIRS:-200000}
OUT=bench/RESULTS.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# stats FILE: "median min max" of the numbers in FILE, one per line
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.0f %.0f %.0f", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

loop() { # threads depth-of-stack memtrace-depth|none
	if [ "$3" = none ]; then
		LD_LIBRARY_PATH=$SIM $B/bench/alloc-loop "$1" "$PAIRS" "$2"
	else
		LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$TMP/t.bin MEMTRACE_DEPTH=$3 \
			$B/bench/alloc-loop "$1" "$PAIRS" "$2"
		rm -f "$TMP"/t*.bin
	fi
}

overhead_row() { # threads frames memtrace-depth label
	: >"$TMP/ov"
	: >"$TMP/base"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		plain=$(loop "$1" "$2" none)
		traced=$(loop "$1" "$2" "$3")
		echo "$plain" >>"$TMP/base"
		awk -v a="$plain" -v b="$traced" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/ov"
	done
	set -- "$@" $(stats "$TMP/ov") $(stats "$TMP/base")
	printf '| %s | %s | %s ns | %s .. %s | %s ns |\n' "$4" "$1" "$5" "$6" "$7" "$8"
}

echo "memtrace bench: $ROUNDS rounds of $PAIRS alloc/free pairs per thread" >&2
{
	echo "# memtrace benchmark results"
	echo
	echo "Measured by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d), $(nproc) cores,"
	echo "$(uname -m), on the simulated driver. Median of $ROUNDS rounds (min .. max)."
	echo
	echo "## Recorder: cost per event"
	echo
	echo "CPU time per cuMemAlloc_v2/cuMemFree_v2 pair (bench/alloc-loop.c), traced minus"
	echo "untraced in the same round, halved (two events per pair). Targets: <= 150 ns"
	echo "without backtraces, <= 1 us with a repeated 64-frame stack."
	echo
	echo "| configuration | threads | overhead per event | min .. max | untraced pair |"
	echo "| --- | --- | --- | --- | --- |"
	for th in 1 8; do
		overhead_row $th 0 0 "no backtraces (MEMTRACE_DEPTH=0)"
		overhead_row $th 16 16 "16-frame stack, depth 16"
		overhead_row $th 64 64 "64-frame stack, depth 64"
	done
	echo
	echo "Command: \`LD_LIBRARY_PATH=build/simcuda/driver [LD_PRELOAD=build/libmemtrace.so"
	echo "MEMTRACE_DEPTH=D] build/bench/alloc-loop THREADS $PAIRS FRAMES\`."
	echo
	echo "## Recorder: trace bytes per event"
	echo
	LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$TMP/size.bin MEMTRACE_DEPTH=64 \
		$B/bench/alloc-loop 1 "$PAIRS" 64 >/dev/null
	$B/memtrace dump "$TMP/size.bin" >"$TMP/dump"
	size=$(wc -c <"$TMP/size.bin")
	events=$(grep -cE '^(alloc|free) ' "$TMP/dump")
	stack_bytes=$(awk '$1 == "stack" { split($3, kv, "="); s += 16 + 8 * kv[2] } END { print s + 0 }' "$TMP/dump")
	awk -v s="$size" -v e="$events" -v k="$stack_bytes" 'BEGIN {
		printf "%d events in a %d-byte file from one thread with a 64-frame stack. Slab\n", e, s
		printf "headers, unused slab tails, process and module records count as event bytes;\n"
		printf "the fixed 64 KiB before the first slab (a hole: mostly unallocated) does not.\n\n"
		printf "| | bytes per event |\n| --- | --- |\n"
		printf "| new stacks included | %.2f |\n", (s - 65536) / e
		printf "| new stacks excluded (target <= 32) | %.2f |\n", (s - 65536 - k) / e }'
	echo
	if [ -x bench/report-bench.sh ]; then
		echo "## Analyzer"
		echo
		bench/report-bench.sh
	fi
} >"$OUT.tmp" && mv "$OUT.tmp" "$OUT"
cat "$OUT"
