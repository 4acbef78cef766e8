#!/bin/sh
# bench/top-bench.sh [PROCS [EVENTS_PER_S [SECONDS]]] - what `memtrace top`
# costs while it follows a busy job: bench/top-rate's PROCS processes
# (default 16) make EVENTS_PER_S events a second in all (default 1 M) for
# SECONDS (default 10) under `memtrace run` (MEMTRACE_DEPTH=0, the
# simulated driver), while `memtrace top --dir` follows their traces with
# its text frames sent to /dev/null (no terminal: it ends with the job).
# /usr/bin/time gives top's CPU time and peak RSS; prints its CPU share
# of one core over the job's run, its peak RSS, the events traced and the
# events top fed to the analysis (its last frame), which must be the same.
# BENCH_ROUNDS rounds (default 3), one line each.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
M=$B/memtrace
TIME=/usr/bin/time
[ -x "$M" ] && [ -x "$B/bench/top-rate" ] || { echo "build first: make tests-build" >&2; exit 1; }
[ -x "$TIME" ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
PROCS=${1:-16}
RATE=${2:-1000000}
SECS=${3:-10}
ROUNDS=${BENCH_ROUNDS:-3}
D=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-topbench.XXXXXX")
trap 'rm -rf "$D"' EXIT

echo "procs events/s seconds | top: cpu% of one core, peak RSS MB | events traced, state records top fed"
r=0
while [ $r -lt "$ROUNDS" ]; do
	rm -rf "$D/run"
	mkdir -p "$D/run"
	sync
	$TIME -f "%U %S %M" -o "$D/time" "$M" top --interval 1 --dir "$D/run" >"$D/frames" 2>"$D/top.err" &
	TOP=$!
	start=$(date +%s.%N)
	LD_LIBRARY_PATH=$B/simcuda/driver MEMTRACE_DEPTH=0 "$M" run --no-summary -o "$D/run/t.bin" -- \
		"$B/bench/top-rate" "$PROCS" "$RATE" "$SECS" >"$D/counts" 2>"$D/run.err" ||
		{ echo "the load failed: $(cat "$D/run.err")" >&2; kill $TOP; exit 1; }
	wait $TOP || { echo "top failed: $(cat "$D/top.err")" >&2; exit 1; }
	end=$(date +%s.%N)
	traced=$(awk '{ s += $1 } END { print s }' "$D/counts")
	fed=$(grep '^memtrace top:' "$D/frames" | tail -1 | sed 's/.*), \([0-9]*\) records.*/\1/')
	read -r u s rss <"$D/time"
	awk -v u="$u" -v s="$s" -v t0="$start" -v t1="$end" -v rss="$rss" -v p="$PROCS" -v r="$RATE" \
		-v sec="$SECS" -v traced="$traced" -v fed="$fed" \
		'BEGIN { printf "%d %d %d | %.1f%% %.1f MB | %d, %d\n", p, r, sec, 100 * (u + s) / (t1 - t0), rss / 1024, traced, fed }'
	r=$((r + 1))
done
