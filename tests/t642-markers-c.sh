#!/bin/sh
# t642: memtrace's C marker API (include/memtrace/markers.h): the same
# records as NVTX's, origin "c"; per range and step figures by hand
# (rt-markers.c): app:load 2 MiB; step 1 peaks at 2+4+8 = 14 MiB, ends at
# 6; step 2 at 18, ends at 10; app:eval 11 MiB. Without memtrace the calls
# answer as no-ops and the program runs the same.
. "$(dirname "$0")/lib.sh"
MiB=1048576

out=$(sim "$CLIENTS/rt-markers") || fail "rt-markers without memtrace failed"
expect_eq "$out" "push -1 start 0 pop-with-none -1" "no-op answers without memtrace"
out=$(traced "$CLIENTS/rt-markers" 2>/dev/null) || fail "rt-markers under memtrace failed"
expect_eq "$out" "push 0 start id pop-with-none -1" "answers under memtrace"
"$MEMTRACE" dump "$T/trace.bin" | grep "^range" | grep -vc "origin=c" | grep -qx 0 || fail "a range not of origin c"
"$MEMTRACE" report --json --no-db "$T/trace.bin" | python3 -c '
import json, sys
M = 1 << 20
d = json.load(sys.stdin)["ranges"]
r = {x["range"]: x["peak_reserved"] // M for x in d["ranges"]}
assert r == {"app:load": 2, "step N": 18, "app:eval": 11}, r
s = [(x["step"], x["peak_reserved"] // M, x["reserved_at_end"] // M) for x in d["steps"]]
assert s == [(1, 14, 6), (2, 18, 10)], s
assert d["marks"] == 1 and d["misuse"]["pops_unmatched"] == 1, d
assert d["growth"]["reserved_per_step"] == 4 * M, d["growth"]
' || fail "marker API figures"
exit 0
