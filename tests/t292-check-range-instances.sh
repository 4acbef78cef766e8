#!/bin/sh
# t292: a check over a range scope reads every instance of the range, though
# the ranges model folds all but its highest away (docs/units.md, "What it
# costs"). By hand from tests/clients/rt-ranges-vary.c (reserved, no
# framework): work #1 from 0 to a peak of 64 MiB, back to 0 (kept 0);
# work #2 0 -> 2 (kept 2); work #3 2 -> peak 12 -> 8 (kept 6); layer 1
# 8 -> 18 (kept 10); layer 2 18 -> peak 218 -> 18 (kept 0). So leaked of
# work is #3's 6 MiB although #1 has its peak; layer 1's own figures are
# there although layer 2 is its range's highest.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

traced "$CLIENTS/rt-ranges-vary" 2>/dev/null || fail "rt-ranges-vary failed"
"$MEMTRACE" check --json "leaked[range:work] <= 5MiB" "peak[range:work] == 64MiB" \
	"leaked[range:layer N] == 10MiB" "leaked[range:layer 2] == 0" \
	"peak[range:layer 1] == 18MiB" "peak[range:layer N] == 218MiB" \
	"$T/trace.bin" >"$T/out.json" 2>"$T/err"
expect_eq "$?" 1 "exit status"
python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")), x.get("range", ""))' \
	"$T/out.json" >"$T/got"
expect_eq "$(cat "$T/got")" "leaked[range:work] <= 5MiB | FAIL $((6 * MiB)) work
peak[range:work] == 64MiB | pass $((64 * MiB)) work
leaked[range:layer N] == 10MiB | pass $((10 * MiB)) layer 1
leaked[range:layer 2] == 0 | pass 0 layer 2
peak[range:layer 1] == 18MiB | pass $((18 * MiB)) layer 1
peak[range:layer N] == 218MiB | pass $((218 * MiB)) layer 2" "results"
exit 0
