#!/bin/sh
# `memtrace report` on rt-rep-peak, whose numbers are worked out by hand in
# its header: the peak (50 MiB, set by the 30 MiB allocation, with the two
# sites live then), the 4 MiB left at exit, pinned host memory apart, and
# the failed 1 PiB request with the device's state. Then the database: it
# is created beside the trace, reused while the trace is unchanged, and
# answers the example queries of docs/schema.md.
. "$(dirname "$0")/lib.sh"

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

traced "$CLIENTS/rt-rep-peak" >"$T/out" 2>"$T/err" || fail "rt-rep-peak failed: $(cat "$T/err")"
"$MEMTRACE" report --json "$T/trace.bin" >"$T/json" 2>"$T/err" || fail "report --json exited $?: $(cat "$T/err")"
[ -s "$T/err" ] && fail "report warned: $(cat "$T/err")"
expect_eq "$(jnum format_version "$T/json")" 2 "format_version"
expect_eq "$(jnum peak_reserved_bytes "$T/json")" 52428800 "peak reserved"
expect_eq "$(jnum peak_allocated_bytes "$T/json")" 52428800 "peak allocated"
expect_eq "$(jnum cached_bytes_at_peak "$T/json")" 0 "cached at the peak"
expect_eq "$(jnum left_at_exit_bytes "$T/json")" 4194304 "live at exit"
expect_eq "$(jnum host_pinned_peak_bytes "$T/json")" 1048576 "pinned host peak"
expect_eq "$(jnum total "$T/json")" 10 "events"
expect_eq "$(jnum failed "$T/json")" 1 "failed events"
expect_eq "$(jnum cudaMalloc "$T/json")" 5 "cudaMalloc events"
expect_eq "$(jnum untraced_bytes_at_peak "$T/json")" 314572800 "untraced: the simulated 300 MiB context"
# the peak was set by the 30 MiB allocation in site_c
sed -n '/"peak_set_by"/,/hidden_frames/p' "$T/json" >"$T/setby"
expect_eq "$(jnum bytes "$T/setby")" 31457280 "peak set by"
grep -q '"function": "site_c", "file": "[^"]*rt-rep-peak.c", "line": 15,.*"user": true' "$T/setby" ||
	fail "peak not set by site_c (rt-rep-peak.c:15): $(cat "$T/setby")"
# the sites live at the peak, largest first: c then b (a was freed)
sed -n '/^  "peak_sites"/,/^  \]/p' "$T/json" >"$T/sites"
expect_eq "$(grep '"bytes"' "$T/sites" | sed 's/.*: //; s/,//' | tr '\n' ' ')" "31457280 20971520 " "peak sites"
grep -q '"function": "site_a"' "$T/sites" && fail "site_a was freed before the peak"
# the leak: d, 4 MiB, one allocation
sed -n '/^  "leaks"/,/^  \]/p' "$T/json" >"$T/leaks"
expect_eq "$(grep -A3 '"reasons"' "$T/leaks" | tr -d ' \n')" '"reasons":["live_at_exit"],"interrupted":false,' "leak reasons"
expect_eq "$(jnum bytes "$T/leaks")" 4194304 "leak bytes"
grep -q '"function": "site_d"' "$T/leaks" || fail "the leak is not site_d"
# the failure
sed -n '/^  "failures"/,/^  \]/p' "$T/json" >"$T/fail"
expect_eq "$(jnum requested_bytes "$T/fail")" 1125899906842624 "failed request"
expect_eq "$(jnum reserved_bytes "$T/fail")" 4194304 "reserved at the failure"
expect_eq "$(jnum error "$T/fail")" 2 "failure error"
expect_eq "$(jnum api "$T/fail")" '"cudaMalloc"' "failure api"
[ "$(jnum device_free_bytes "$T/fail")" != null ] || fail "no memory sample after the failure"
grep -A3 '"top_holders"' "$T/fail" | grep -q '"bytes": 4194304' || fail "top holder is not d"

# the text report says the same for a person
"$MEMTRACE" report "$T/trace.bin" >"$T/text" 2>"$T/err" || fail "report exited $?"
grep -q '^device 0: peak 50.0 MiB reserved at +' "$T/text" || fail "no peak line: $(cat "$T/text")"
grep -q 'set by cudaMalloc of 30.0 MiB at site_c (rt-rep-peak.c:15)' "$T/text" || fail "no 'set by' line"
grep -q 'reserved 50.0 MiB = allocated 50.0 MiB' "$T/text" || fail "no reserved split"
grep -q '+ cached 0 B (held' "$T/text" || fail "no cached line"
grep -q 'live at exit 4.00 MiB' "$T/text" || fail "no live at exit"
grep -q 'dev 0   4.00 MiB      1 alloc   site_d (rt-rep-peak.c:16)' "$T/text" || fail "no leak line"
grep -q 'cudaMalloc of 1.00 PiB on device 0: cudaErrorMemoryAllocation (2)' "$T/text" || fail "no failure line"

# the database: beside the trace, reused while the trace is unchanged
[ -f "$T/trace.bin.db" ] || fail "no database beside the trace"
before=$(stat -c %Y.%s "$T/trace.bin.db")
"$MEMTRACE" report --json "$T/trace.bin" >"$T/json2" || fail "second report failed"
diff -u "$T/json" "$T/json2" >/dev/null || fail "a reused database gives another report"
"$MEMTRACE" report --db "$T/other.db" "$T/trace.bin" >/dev/null || fail "--db failed"
[ -f "$T/other.db" ] || fail "--db did not create its file"
echo "not a database" >"$T/junk.db"
"$MEMTRACE" report --db "$T/junk.db" "$T/trace.bin" >/dev/null 2>"$T/err" && fail "a foreign file was overwritten"
grep -q "exists and is not a memtrace database" "$T/err" || fail "wrong message: $(cat "$T/err")"
expect_eq "$(cat "$T/junk.db")" "not a database" "foreign file untouched"

command -v sqlite3 >/dev/null 2>&1 || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
q() { sqlite3 "$T/trace.bin.db" "$1"; }
expect_eq "$(q "SELECT value FROM meta WHERE key = 'complete'")" 1 "load completed"
expect_eq "$(q "SELECT count(*) FROM events")" 10 "events rows"
expect_eq "$(q "SELECT count(*) FROM ev WHERE op = 'free' AND alloc_id IS NOT NULL")" 4 "paired frees"
# top sites at the peak (docs/schema.md)
expect_eq "$(q "SELECT group_concat(b, ' ') FROM (SELECT sum(a.bytes) AS b FROM allocations a, peaks p
	WHERE p.trace IS NULL AND p.device = 0 AND a.device = 0 AND a.kind IN (1, 2, 5, 6, 10)
	AND a.alloc_ns <= p.time_ns AND (a.free_ns IS NULL OR a.free_ns > p.time_ns)
	GROUP BY a.trace, a.stack ORDER BY b DESC)")" "31457280 20971520" "SQL: top sites at the peak"
# live memory over time: its maximum is the peak
expect_eq "$(q "SELECT max(live) FROM (SELECT sum(CASE op WHEN 0 THEN bytes ELSE -bytes END)
	OVER (ORDER BY id) AS live FROM events WHERE device = 0 AND result = 0 AND kind IN (1, 2, 10))")" 52428800 \
	"SQL: live memory over time"
expect_eq "$(q "SELECT function FROM stack_frames f, peaks p, events e WHERE p.trace IS NULL
	AND e.time_ns = p.time_ns AND e.op = 0 AND f.trace = e.trace AND f.stack = e.stack AND f.level = 0")" site_c \
	"SQL: frames of the call that set the peak"
exit 0
