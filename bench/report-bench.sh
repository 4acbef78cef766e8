#!/bin/sh
# bench/report-bench.sh [EVENTS...] - throughput and memory of `memtrace
# report`: records traces of about 1 M and 10 M events (rt-threads, 4
# threads of cudaMalloc/cudaFree pairs, on the simulated CUDA, with
# MEMTRACE_DEPTH=4) and times a report from scratch (load into SQLite plus
# analysis), a report reusing the database, and a report without one,
# with /usr/bin/time -v for the peak resident memory. Each is run
# BENCH_ROUNDS times (default 3) after a sync, so that the writeback of
# earlier files does not compete for the CPUs; prints one line per kind:
# events, median seconds (and the range), events per second at the median,
# the median CPU seconds (user + system: the figure to compare on a busy
# machine), the largest peak RSS. MEMTRACE=PATH times another build of
# memtrace (an older one, to compare) on the same traces.
#   make tests-build && bench/report-bench.sh            (1 M and 10 M)
#   bench/report-bench.sh 200000                         (one size)
#   bench/report-bench.sh ranks [RANKS [EVENTS]]         (many ranks)
# The ranks mode writes RANKS traces of EVENTS events each with
# build/bench/gen-ranks (default 1024 x 100000: 8 hosts x 8 devices, 3.2 GB)
# and times `report --no-db` and `report` of all of them, with the peak
# anonymous memory (RssAnon, sampled every 0.2 s) beside the peak RSS,
# which also counts the traces' mapped pages. BENCH_RANKS_DB=0: --no-db only.
# "ranks 1 N" is one trace of N events, the rate that many ranks are held to.
# Needs about 330 MB of disk per 10 M events (trace) and as much for the
# database; the directory is BENCH_DIR (default: a temporary one).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
M=${MEMTRACE:-$B/memtrace}
SIM=$B/simcuda/driver:$B/simcuda/runtime
TIME=/usr/bin/time
[ -x "$M" ] && [ -x "$B/tests/clients/rt-threads" ] || { echo "build first: make tests-build" >&2; exit 1; }
[ -x "$TIME" ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
D=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")}
mkdir -p "$D"
[ $# -gt 0 ] || set -- 1000000 10000000

ROUNDS=${BENCH_ROUNDS:-3}

# ranks_measure LABEL EVENTS CMD...: one run; seconds, events/s, peak RSS
# and peak RssAnon
ranks_measure() {
	label=$1 n=$2
	shift 2
	sync
	"$TIME" -v "$@" >/dev/null 2>"$D/time.txt" &
	tp=$!
	ma=0
	while kill -0 $tp 2>/dev/null; do
		for c in $(pgrep -P $tp); do
			a=$(awk '/RssAnon/ { print $2 }' /proc/$c/status 2>/dev/null)
			[ "${a:-0}" -gt "$ma" ] && ma=$a
		done
		sleep 0.2
	done
	wait $tp || { echo "$label: failed:" >&2; tail -5 "$D/time.txt" >&2; return 1; }
	s=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$D/time.txt" |
		awk -F: '{ t = 0; for (i = 1; i <= NF; i++) t = t * 60 + $i; print t }')
	u=$(sed -n 's/.*User time (seconds): //p' "$D/time.txt")
	kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time.txt")
	awk -v l="$label" -v n="$n" -v s="$s" -v u="$u" -v kb="$kb" -v ma="$ma" 'BEGIN {
		printf "%-26s %10d events %7.2f s (%.2f s user) %9.0f events/s %7.1f MB peak RSS %6.1f MB anon\n",
			l, n, s, u, (s > 0 ? n / s : 0), kb / 1024, ma / 1024 }'
}

if [ "${1:-}" = ranks ]; then
	nr=${2:-1024} ne=${3:-100000}
	[ -x "$B/bench/gen-ranks" ] || { echo "build first: make tests-build" >&2; exit 1; }
	R=$D/ranks-$nr-$ne
	if [ ! -d "$R" ]; then
		mkdir -p "$R" && "$B/bench/gen-ranks" "$R" "$nr" "$ne" >"$R.expect" || exit 1
	fi
	ev=$(awk '{ n += $6 } END { print n }' "$R.expect")
	echo "ranks: $nr traces of $ne events ($ev events), $(du -sh "$R" | cut -f1)"
	ranks_measure "ranks, report --no-db" "$ev" "$M" report --no-db "$R"/*.bin
	if [ "${BENCH_RANKS_DB:-1}" = 1 ]; then
		rm -f "$R.db"
		ranks_measure "ranks, report (database)" "$ev" "$M" report --db "$R.db" "$R"/*.bin
		echo "database: $(du -h "$R.db" | cut -f1)"
		rm -f "$R.db"
	fi
	[ -n "${BENCH_DIR:-}" ] || rm -rf "$D"
	exit 0
fi

# measure LABEL EVENTS FRESH CMD...: one line of figures; FRESH=1 removes
# the database before each round
measure() {
	label=$1 n=$2 fresh=$3
	shift 3
	: >"$D/rounds.txt"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		[ "$fresh" = 1 ] && rm -f "$tr.db"
		sync
		"$TIME" -v "$@" >/dev/null 2>"$D/time.txt" || { echo "$label: failed:" >&2; tail -5 "$D/time.txt" >&2; return 1; }
		s=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$D/time.txt" |
			awk -F: '{ t = 0; for (i = 1; i <= NF; i++) t = t * 60 + $i; print t }')
		kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/time.txt")
		cpu=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$D/time.txt" | awk '{ t += $1 } END { print t }')
		echo "$s $kb $cpu" >>"$D/rounds.txt"
		r=$((r + 1))
	done
	cm=$(awk '{ print $3 }' "$D/rounds.txt" | sort -n | awk '{ c[NR] = $1 } END { print c[int((NR + 1) / 2)] }')
	sort -n "$D/rounds.txt" | awk -v l="$label" -v n="$n" -v cm="$cm" '
		{ s[NR] = $1; if ($2 > kb) kb = $2 }
		END { m = s[int((NR + 1) / 2)]
		      printf "%-26s %9d events %6.2f s (%.2f-%.2f) %9.0f events/s %6.2f s CPU %6.1f MB peak RSS\n",
			l, n, m, s[1], s[NR], (m > 0 ? n / m : 0), cm, kb / 1024 }'
}

for n in "$@"; do
	pairs=$((n / 8))
	tr=$D/threads-$n.bin
	if [ ! -s "$tr" ]; then
		LD_LIBRARY_PATH=$SIM MEMTRACE_DEPTH=4 "$M" run -o "$tr" -- "$B/tests/clients/rt-threads" 4 "$pairs" \
			>/dev/null 2>"$D/run.err" || { cat "$D/run.err" >&2; exit 1; }
	fi
	ev=$(LD_LIBRARY_PATH= "$M" report --no-db --json "$tr" | sed -n 's/^    "total": \([0-9]*\),$/\1/p')
	echo "trace $tr: $ev events, $(du -h "$tr" | cut -f1)"
	measure "report, load + analysis" "$ev" 1 "$M" report "$tr"
	measure "report, database reused" "$ev" 0 "$M" report "$tr"
	measure "report --no-db" "$ev" 0 "$M" report --no-db "$tr"
	echo "database: $(du -h "$tr.db" | cut -f1)"
	rm -f "$tr.db"
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$D"
