#!/bin/sh
# bench/ranges-bench.sh [N...]: the cost of NVTX ranges under memtrace
# (docs/units.md): rt-nvtx many N (N push/pop pairs, nothing allocated
# inside) with and without `memtrace run`, the trace's size, and the
# report's time and memory. Needs `make tests-build`.
cd "$(dirname "$0")/.." || exit 1
B=build
export LD_LIBRARY_PATH=$B/simcuda/driver:$B/simcuda/runtime
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ $# -gt 0 ] || set -- 100000 1000000
for n in "$@"; do
	bare=$("$B/tests/clients/rt-nvtx" many "$n" 2>&1 | sed -n 's/.*, \(.*\) ns per pair/\1/p')
	traced=$("$B/memtrace" run --no-summary -o "$T/m.bin" "$B/tests/clients/rt-nvtx" many "$n" 2>&1 |
		sed -n 's/.*, \(.*\) ns per pair/\1/p')
	size=$(wc -c <"$T/m.bin")
	rep=$( { /usr/bin/time -f "%e s, %M KB" "$B/memtrace" report --no-db "$T/m.bin" >/dev/null; } 2>&1 | tail -n 1)
	echo "$n pairs: $bare ns a pair without memtrace, $traced ns with; trace $size bytes ($((size / n)) a pair); report $rep"
	rm -f "$T/m.bin"
done
