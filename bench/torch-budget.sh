#!/bin/sh
# bench/torch-budget.sh [RATE SECONDS] - what memtrace's drains of PyTorch's
# allocator history cost a job: bench/torch-rate.py makes RATE history
# entries a second (default 30000) for SECONDS (default 20) on the torch
# test double, whose _snapshot() costs 7 us an entry as PR #172672 measured
# on real PyTorch (TORCHDOUBLE_SNAPSHOT_US), untraced and under memtrace
# run, ROUNDS (3) rounds, the median round by share shown. Prints a
# markdown table: the job's wall time without and with memtrace, the
# periodic drains (count, time, share of the run, from the trace's
# drain_ns notes), the exit drain (once a run: the whole ring), the cost
# an entry of a drain, the entries the job made and those the budget let
# the ring drop (said in the report: 3 for each alloc lost), for the
# default ring (MAX_ENTRIES2, 20,000 entries) and one of 200,000.
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
RATE=${1:-30000}
SECS=${2:-20}
ROUNDS=${ROUNDS:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LD_LIBRARY_PATH=$B/simcuda/driver:$B/simcuda/runtime
export PYTHONPATH=tests/torchdouble TORCHDOUBLE_SNAPSHOT_US=${TORCHDOUBLE_SNAPSHOT_US:-7}

med() { sort -n | awk '{ v[NR] = $1 } END { printf "%s", v[int((NR + 1) / 2)] }'; }

echo "| ring (max_entries) | job wall s, untraced | with memtrace | periodic drains | their time s | share of the run | exit drain s | us an entry | entries made | dropped |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for me in ${MAX_ENTRIES2:-20000} 200000; do
	: >"$TMP/rows"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		a=$(python3 bench/torch-rate.py "$RATE" "$SECS" | sed -n 's/.*wall_s=//p')
		MEMTRACE_TORCH_MAX_ENTRIES=$me $B/memtrace run --no-summary -o "$TMP/t.bin" -- \
			python3 bench/torch-rate.py "$RATE" "$SECS" >"$TMP/out" 2>/dev/null
		b=$(sed -n 's/.*wall_s=//p' "$TMP/out")
		made=$(sed -n 's/entries=\([0-9]*\).*/\1/p' "$TMP/out")
		dropped=$($B/memtrace report --no-db --json "$TMP/t.bin" 2>/dev/null |
			python3 -c 'import json, sys; print(3 * json.load(sys.stdin)["framework"]["dropped_events"])')
		# each drain's note: drain_ns, drain_entries, drain (why)
		$B/memtrace dump "$TMP/t.bin" | sed -n 's/.*drain_ns=\([0-9]*\)\\ndrain_entries=\([0-9]*\)\\ndrain=\([a-z_]*\).*/\1 \2 \3/p' |
			awk -v a="$a" -v b="$b" -v made="$made" -v dr="$dropped" '
			$3 == "periodic" { n++; pns += $1 } $3 == "exit" { ens += $1 } { ns += $1; e += $2 }
			END { printf "%s %s %d %.3f %.2f %.3f %.2f %s %s\n", a, b, n, pns / 1e9, 100 * pns / 1e9 / b,
			      ens / 1e9, e ? ns / e / 1000 : 0, made, dr }' >>"$TMP/rows"
		rm -f "$TMP"/t*.bin
	done
	# the round of median periodic share
	sort -k5 -n "$TMP/rows" | awk -v me="$me" '{ r[NR] = $0 } END { split(r[int((NR + 1) / 2)], f, " ");
		printf "| %s | %s | %s | %s | %s | %s%% | %s | %s | %s | %s |\n", me, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9] }'
done
