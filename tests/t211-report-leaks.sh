#!/bin/sh
# Leak candidates on rt-rep-grow: keep() grows by 1 MiB ten times over the
# whole run and never frees (growing, and live at exit: 10 MiB in 10
# allocations); churn() allocates and frees 3 MiB each time (neither).
. "$(dirname "$0")/lib.sh"

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

traced "$CLIENTS/rt-rep-grow" >"$T/out" 2>"$T/err" || fail "rt-rep-grow failed: $(cat "$T/err")"
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report failed"
[ -f "$T/trace.bin.db" ] && fail "--no-db wrote a database"
sed -n '/^  "leaks"/,/^  \]/p' "$T/json" >"$T/leaks"
expect_eq "$(grep -c '"kind": "live_at_exit"' "$T/leaks")" 1 "sites live at exit"
expect_eq "$(grep -c '"kind": "growing"' "$T/leaks")" 1 "growing sites"
expect_eq "$(grep '"bytes"' "$T/leaks" | sed 's/.*: //; s/,//' | tr '\n' ' ')" "10485760 10485760 " "leak bytes"
expect_eq "$(grep '"count"' "$T/leaks" | sed 's/.*: //; s/,//' | tr '\n' ' ')" "10 10 " "leak counts"
expect_eq "$(grep -c '"function": "keep"' "$T/leaks")" 2 "both are keep()"
grep -q '"function": "churn"' "$T/leaks" && fail "churn() is not a leak"
expect_eq "$(jnum peak_reserved_bytes "$T/json")" 13631488 "peak: 10 MiB kept + the last 3 MiB churn"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "report failed"
grep -A1 'growing (live bytes kept rising' "$T/text" | grep -q '10.0 MiB     10 allocs  keep (rt-rep-grow.c:12)' ||
	fail "no growing line: $(cat "$T/text")"
exit 0
