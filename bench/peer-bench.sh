#!/bin/sh
# bench/peer-bench.sh [PAIRS [PATHS]] - the analyzer's CPU an event beside
# its closest peer's: one client (bench/paths: PAIRS alloc/free pairs, each
# from one of PATHS call paths in random order, default 5,000,000 pairs =
# 10 M events on 1,024 paths) recorded by memtrace (cuMemAlloc/cuMemFree on
# the simulated driver, MEMTRACE_DEPTH=64) and by heaptrack (malloc/free),
# then `memtrace report --no-db` of its trace and `heaptrack_print` of
# heaptrack's, each BENCH_ROUNDS times (default 3) in turn: the median CPU
# (user + system, /usr/bin/time), its range, ns an event and the largest
# peak RSS. heaptrack's events are counted by heaptrack_print itself: twice
# its "calls to allocation functions" (each malloc has its free);
# memtrace's by its report.
#   make tests-build && bench/peer-bench.sh [5000000 [1024]]
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
PAIRS=${1:-5000000}
PATHS=${2:-1024}
ROUNDS=${BENCH_ROUNDS:-3}
TIME=/usr/bin/time
HT=$(command -v heaptrack || true)
HP=$(command -v heaptrack_print || true)
[ -x $B/bench/paths ] && [ -x $B/memtrace ] || { echo "build first: make tests-build" >&2; exit 1; }
[ -n "$HT" ] && [ -n "$HP" ] || { echo "needs heaptrack and heaptrack_print (apt-get install heaptrack)" >&2; exit 1; }
[ -x "$TIME" ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
D=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-peer.XXXXXX")
trap 'rm -rf "$D"' EXIT

LD_LIBRARY_PATH=$B/simcuda/driver LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$D/mt.bin \
	MEMTRACE_DEPTH=64 $B/bench/paths 1 "$PAIRS" "$PATHS" rand 0 >/dev/null || exit 1
LD_LIBRARY_PATH=$B/simcuda/driver timeout 600 "$HT" -o "$D/hk" $B/bench/paths 1 "$PAIRS" "$PATHS" rand 0 malloc >/dev/null 2>&1 || exit 1
HK=$(ls "$D"/hk.* | head -1)
mt_events=$($B/memtrace report --no-db --json "$D/mt.bin" |
	python3 -c 'import json, sys; print(sum(p["events"] for p in json.load(sys.stdin)["processes"]))')
"$HP" "$HK" >"$D/hp.txt" 2>&1 || { echo "heaptrack_print failed: $(tail -1 "$D/hp.txt")" >&2; exit 1; }
# "calls to allocation functions: N (...)": mallocs; each has its free
hk_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$D/hp.txt")
hk_events=$((hk_calls * 2))
echo "client: bench/paths 1 $PAIRS $PATHS rand 0 (memtrace: cuMemAlloc/cuMemFree, depth 64; heaptrack: malloc/free)"
echo "traces: memtrace $(du -h "$D/mt.bin" | cut -f1) ($mt_events events), heaptrack $(du -h "$HK" | cut -f1) ($hk_calls allocation calls: $hk_events events)"

measure() { # LABEL EVENTS CMD...: BENCH_ROUNDS runs; one line
	label=$1 n=$2
	shift 2
	: >"$D/rounds.txt"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		"$TIME" -v "$@" >/dev/null 2>"$D/time.txt" || { echo "$label: failed: $(tail -3 "$D/time.txt")" >&2; return 1; }
		cpu=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$D/time.txt" | awk '{ t += $1 } END { print t }')
		kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time.txt")
		echo "$cpu $kb" >>"$D/rounds.txt"
		r=$((r + 1))
	done
	sort -n "$D/rounds.txt" | awk -v l="$label" -v n="$n" '
		{ c[NR] = $1; if ($2 > kb) kb = $2 }
		END { m = c[int((NR + 1) / 2)]
		      printf "%-24s %9d events %6.2f s CPU (%.2f-%.2f) %6.0f ns an event %6.1f MB peak RSS\n",
			l, n, m, c[1], c[NR], m * 1e9 / n, kb / 1024 }'
}

measure "memtrace report --no-db" "$mt_events" $B/memtrace report --no-db "$D/mt.bin"
measure "heaptrack_print" "$hk_events" "$HP" "$HK"
