#!/bin/sh
# t653: samples/fragmentation.c announces its cache with NVTX (a segment a
# heap of domain "frag", an allocated block a region), so the holes the
# CUDA API cannot see are in the report, as samples/README.md works out:
# at the peak 5 heaps, 100 MiB in 25 regions, no free space; at the first
# failed 30 MiB cudaMalloc 48 MiB in 12 regions and 52 MiB free in 9 holes
# (blocks 2 and 4 of segments 1-4, segment 5 whole), the largest 20 MiB;
# at the second (segment 5 given back) 80 MiB in 4 heaps, 32 MiB free in 8
# holes of 4 MiB; both "enough free, but in pieces"; 6 heaps and 26
# regions in all, nothing left at the end. The ballast run (no
# SIMCUDA_MEM) tells the same story of the pool.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/fragmentation" ] || skip "no $SAMPLES/fragmentation (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"

check() {
	"$MEMTRACE" report --json --no-db "$1" >"$T/json" || fail "$2: report --json failed"
	python3 - "$T/json" <<'PY' || fail "$2: the pool's figures differ"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["nvtx_pools"]
def st(s): return (s["heaps"], s["size_bytes"] // M, s["regions"], s["live_bytes"] // M, s["free_bytes"] // M, s["holes"], s["largest_hole_bytes"] // M)
[p] = d["pools"]
got = (p["name"], p["domain"], p["heaps_registered"], p["regions_registered"], st(p["peak"]),
       [st(f["state"]) for f in p["failures"]], [(f["api"], f["requested_bytes"] // M) for f in p["failures"]],
       st(p["at_end"]), [(s["peak_live_bytes"] // M, s["regions_registered"]) for s in p["sites"]])
want = ("frag", "frag", 6, 26, (5, 100, 25, 100, 0, 0, 0),
        [(5, 100, 12, 48, 52, 9, 20), (4, 80, 12, 48, 32, 8, 4)], [("cudaMalloc", 30), ("cudaMalloc", 30)],
        (0, 0, 0, 0, 0, 0, 0), [(100, 25), (30, 1)])
if got != want:
    print(got, "!=", want)
    sys.exit(1)
PY
	"$MEMTRACE" report --no-db "$1" >"$T/report" || fail "$2: report failed"
	expect_eq "$(grep -c "enough free, but in pieces" "$T/report")" 2 "$2: the failures said in pieces"
	grep -q "^  pool 'frag' (NVTX, 6 heaps, the first at 0x[0-9a-f]*): 100 MiB in 5 heaps: 48.0 MiB in 12 regions, 52.0 MiB free in 9 holes, largest 20.0 MiB, at its process's first failed allocation$" "$T/report" ||
		fail "$2: the pool's line: $(grep "pool 'frag'" "$T/report")"
}

SIMCUDA_MEM=400M traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" || fail "fragmentation failed: $(cat "$T/err")"
check "$T/trace.bin" "400 MiB device"
TRACE=$T/ballast.bin traced "$SAMPLES/fragmentation" >"$T/out" 2>"$T/err" || fail "fragmentation with a ballast failed"
check "$T/ballast.bin" "ballast"
# without memtrace the sample prints the same story
SIMCUDA_MEM=400M sim "$SAMPLES/fragmentation" >"$T/plain" || fail "fragmentation without memtrace failed"
grep -q "52 MiB is free in total, but in pieces" "$T/plain" || fail "the sample's own words: $(cat "$T/plain")"
exit 0
