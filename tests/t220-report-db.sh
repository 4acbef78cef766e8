#!/bin/sh
# t220-report-db: what `memtrace report` loads into SQLite. The reader unit
# test's sample trace (every record type) gives exact rows in every table
# the loader fills; a trace of 100,000 events (25 batches of the loader's
# 4,096 rows) holds exactly the trace's events, numbered 1..N in time
# order, each free paired with the allocation it ends; a database that
# cannot grow stops the report with one line and exit 1 and is removed,
# and the next report builds it; so does a report killed by SIGTERM, and
# the file a SIGKILL leaves is rebuilt by the next report.
. "$(dirname "$0")/lib.sh"

GEN=$B/tests/unit/test-analyze-reader
[ -x "$GEN" ] || fail "no $GEN (make tests-build)"
command -v sqlite3 >/dev/null || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
q() { sqlite3 "$1" "$2"; }

# --- the sample trace: every loaded table, row by row
"$GEN" --write-sample sample.bin || fail "cannot write the sample trace"
"$MEMTRACE" report sample.bin >out 2>err || fail "report of the sample exited $?: $(cat err)"
expect_eq "$(q sample.bin.db "SELECT id, trace, time_ns, tid, op, kind, flags, device, api,
	printf('0x%x', addr), bytes, result, stack, alloc_id FROM events")" \
"1|1|60|100|0|1|128|0|64|0x7f1000000000|1048576|0|1|
2|1|101|200|0|5|0|1|8|0x7f2000000000|4096|0|0|
3|1|5000000005|100|1|1|0|0|7|0x7f1000000000|1048576|0|0|1
4|1|9000000000|100|0|10|64|0|32|0x10|64|0|0|" "sample: events"
expect_eq "$(q sample.bin.db "SELECT * FROM event_ex")" "2|20480|24576" "sample: event_ex"
expect_eq "$(q sample.bin.db "SELECT * FROM pools")" "1|102|200|1|24576|2097152|4096|8" "sample: pools"
expect_eq "$(q sample.bin.db "SELECT * FROM meminfo")" "1|103|200|1|1000|2000" "sample: meminfo"
expect_eq "$(q sample.bin.db "SELECT trace, time_ns, tid, hex(text) FROM notes")" \
"1|104|200|68656C6C6F
1|104|200|6122625C6309640A650166FF67C3A968E282" "sample: notes, bytes as recorded"
expect_eq "$(q sample.bin.db "SELECT value FROM meta WHERE key = 'complete'")" 1 "sample: load complete"
expect_eq "$(q sample.bin.db "SELECT count(*) FROM sqlite_temp_master")" 0 "sample: no loader tables left"

# --- 100,000 events from two threads
LD_LIBRARY_PATH=$SIM MEMTRACE_DEPTH=2 "$MEMTRACE" run -o big.bin -- "$CLIENTS/rt-threads" 2 25000 \
	>/dev/null 2>run.err || fail "run failed: $(cat run.err)"
"$MEMTRACE" report big.bin >out 2>err || fail "report of big.bin exited $?: $(cat err)"
expect_eq "$(q big.bin.db "SELECT count(*), min(id), max(id) FROM events")" "100000|1|100000" "big: event rows"
expect_eq "$(q big.bin.db "SELECT count(*) FROM (SELECT time_ns < lag(time_ns) OVER (ORDER BY id) AS back
	FROM events) WHERE back")" 0 "big: events out of time order"
expect_eq "$(q big.bin.db "SELECT count(*) FROM events f JOIN events a ON a.id = f.alloc_id
	WHERE f.op = 1 AND a.op = 0 AND a.addr = f.addr AND a.bytes = f.bytes AND a.id < f.id")" 50000 \
	"big: frees paired with their allocation"
expect_eq "$(q big.bin.db "SELECT count(*), count(free_ns) FROM allocations")" "50000|50000" "big: allocations view"
# the same events as the trace, in the normal form of lib.sh
dump_events big.bin >events.trace
q big.bin.db "SELECT op, kind, device, addr, bytes, result FROM ev" | awk -F'|' '
	$1 == "alloc" { print "alloc", $2, $3, $4, $5, $6 }
	$1 == "free" { print "free", $4, $6 }' | sort >events.db
diff -u events.trace events.db >events.diff || fail "database and trace differ: $(head -n 20 events.diff)"

# --- a database that cannot grow (a file size limit; SIGXFSZ ignored, so
# writes fail with EFBIG): one line, exit 1, the file removed; then a
# report builds it
(trap '' XFSZ; ulimit -f 2048; exec "$MEMTRACE" report --db small.db big.bin) >out 2>err
expect_eq "$?" 1 "database that cannot grow: exit status"
expect_eq "$(wc -l <err)" 1 "database that cannot grow: lines on stderr"
grep -qE "^memtrace: 'small\.db': (disk I/O error|database or disk is full)$" err ||
	fail "database that cannot grow: stderr: $(cat err)"
[ -s out ] && fail "database that cannot grow: a report was printed"
[ -e small.db ] && fail "database that cannot grow: the failed load left its file"
"$MEMTRACE" report --db small.db big.bin >out 2>err || fail "rebuild exited $?: $(cat err)"
expect_eq "$(q small.db "SELECT count(*) FROM events")" 100000 "rebuilt database: events"
expect_eq "$(q small.db "SELECT value FROM meta WHERE key = 'complete'")" 1 "rebuilt database: complete"

# --- a report killed while loading, at a few moments: SIGTERM removes the
# half-written file and its journal (a file left is a complete one: the
# load had finished); after SIGKILL the next report rolls back what the
# journal holds, knows the file as its own and rebuilds it
for delay in 0.01 0.03 0.06 0.1; do
	"$MEMTRACE" report --db term.db big.bin >/dev/null 2>&1 &
	pid=$!
	sleep $delay
	kill -TERM $pid 2>/dev/null
	wait $pid
	st=$?
	[ $st = 0 ] || expect_eq "$st" 143 "SIGTERM after $delay s: exit status"
	# no file, or a complete one (the load had finished before the signal)
	if [ -e term.db ]; then
		expect_eq "$(q term.db "SELECT value FROM meta WHERE key = 'complete'")" 1 \
			"SIGTERM after $delay s: the database left is complete"
	fi
	[ -e term.db-journal ] && fail "SIGTERM after $delay s: a journal is left"
	rm -f term.db
	"$MEMTRACE" report --db kill.db big.bin >/dev/null 2>&1 &
	pid=$!
	sleep $delay
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	"$MEMTRACE" report --db kill.db big.bin >/dev/null 2>err || fail "report after SIGKILL at $delay s: $(cat err)"
	expect_eq "$(q kill.db "SELECT count(*) FROM events")" 100000 "report after SIGKILL at $delay s: events"
	rm -f kill.db
done
exit 0
