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
# one site, listed once with both reasons (it was listed twice, which read
# as two leaks)
expect_eq "$(grep -c '"live_at_exit"' "$T/leaks")" 1 "sites live at exit"
expect_eq "$(grep -c '"growing"' "$T/leaks")" 1 "growing sites"
expect_eq "$(grep -c '"site"' "$T/leaks")" 1 "leak candidates"
expect_eq "$(grep '"bytes"' "$T/leaks" | sed 's/.*: //; s/,//' | tr '\n' ' ')" "10485760 " "leak bytes"
expect_eq "$(grep '"count"' "$T/leaks" | sed 's/.*: //; s/,//' | tr '\n' ' ')" "10 " "leak counts"
expect_eq "$(grep -c '"function": "keep"' "$T/leaks")" 1 "it is keep()"
grep -q '"function": "churn"' "$T/leaks" && fail "churn() is not a leak"
expect_eq "$(jnum peak_reserved_bytes "$T/json")" 13631488 "peak: 10 MiB kept + the last 3 MiB churn"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "report failed"
grep -A2 'or kept growing through the run:' "$T/text" >"$T/lines"
expect_eq "$(sed -n 2p "$T/lines" | cut -c1-59)" "    dev 0   10.0 MiB     10 allocs  keep (rt-rep-grow.c:12)" \
	"the leak's line"
expect_eq "$(sed -n 3p "$T/lines")" "              left at exit, growing" "its reasons, once"
exit 0
