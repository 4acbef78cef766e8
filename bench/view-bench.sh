#!/bin/sh
# bench/view-bench.sh [EVENTS...] - the page of `memtrace view` for big
# traces: records traces of about 1 M and 10 M events as report-bench.sh
# does (rt-threads, 4 threads of cudaMalloc/cudaFree pairs, simulated CUDA,
# MEMTRACE_DEPTH=4), writes the page, and loads it in headless Chromium.
# Prints per size: the events, the seconds `memtrace view` took, the page's
# size, the time from navigation until the page's scripts had drawn
# everything and the next frame was painted (paint_ms, measured by the page
# itself with performance.now() and written into its #memtrace-check), and
# the wall time of the whole `chromium --dump-dom` (browser start included);
# then the seconds `memtrace plot` took on the same trace (gnuplot included).
# Targets (issue 13): at most 30 MB and under 3 s to paint at 10 M events;
# (issue 15) view and plot each under 5 s at 10 M events.
#   make tests-build && bench/view-bench.sh          (1 M and 10 M)
# BENCH_DIR keeps the traces (default: a temporary directory, removed).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
M=$B/memtrace
SIM=$B/simcuda/driver:$B/simcuda/runtime
[ -x "$M" ] && [ -x "$B/tests/clients/rt-threads" ] || { echo "build first: make tests-build" >&2; exit 1; }
command -v chromium >/dev/null 2>&1 || { echo "needs chromium (scripts/install-deps.sh)" >&2; exit 1; }
if [ -n "${BENCH_DIR:-}" ]; then
	D=$BENCH_DIR
	mkdir -p "$D"
else
	D=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-vbench.XXXXXX")
	trap 'rm -rf "$D"' EXIT
fi
[ $# -gt 0 ] || set -- 1000000 10000000

now() { date +%s.%N; }
for n in "$@"; do
	pairs=$((n / 8))
	tr=$D/threads-$n.bin
	if [ ! -s "$tr" ]; then
		LD_LIBRARY_PATH=$SIM MEMTRACE_DEPTH=4 "$M" run -o "$tr" -- "$B/tests/clients/rt-threads" 4 "$pairs" \
			>/dev/null 2>"$D/run.err" || { cat "$D/run.err" >&2; exit 1; }
	fi
	events=$("$M" report --json --no-db "$tr" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"]["total"])')
	t0=$(now)
	"$M" view -o "$D/view-$n.html" "$tr" >/dev/null || exit 1
	t1=$(now)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$D/chrome" \
		--dump-dom "$D/view-$n.html" >"$D/dom-$n" 2>/dev/null || { echo "chromium failed" >&2; exit 1; }
	t2=$(now)
	check=$(sed -n '/<pre id="memtrace-check"/,/<\/pre>/p' "$D/dom-$n")
	paint=$(echo "$check" | sed -n 's/^paint_ms //p')
	errs=$(echo "$check" | sed -n 's/.*errors \([0-9]*\).*/\1/p' | head -1)
	size=$(wc -c <"$D/view-$n.html")
	awk -v n="$events" -v v="$(echo "$t1 - $t0" | bc)" -v s="$size" -v p="${paint:-?}" \
		-v w="$(echo "$t2 - $t1" | bc)" -v e="${errs:-?}" 'BEGIN {
		printf "%9d events: view %5.2f s, page %5.1f MB, first paint %s ms, chromium --dump-dom %5.2f s (script errors: %s)\n",
			n, v, s / 1e6, p, w, e }'
	if command -v gnuplot >/dev/null 2>&1; then
		t0=$(now)
		"$M" plot -o "$D/plots-$n" "$tr" >/dev/null || exit 1
		t1=$(now)
		awk -v n="$events" -v p="$(echo "$t1 - $t0" | bc)" 'BEGIN {
			printf "%9d events: plot %5.2f s\n", n, p }'
	fi
done
