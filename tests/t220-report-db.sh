#!/bin/sh
# t220-report-db: what `memtrace report` loads into SQLite. The reader unit
# test's sample trace (every record type) gives exact rows in every table
# the loader fills; a trace of 100,000 events (25 batches of the loader's
# 4,096 rows) holds exactly the trace's events, numbered 1..N in time
# order, each free paired with the allocation it ends. Schema 4 keeps one
# allocs row per allocation with its first free (50,000 rows for the
# 100,000 events), failed calls in failures, and every other free in frees:
# drv-rep-vmm's unmaps (of device 0, from the handle, where the mapping is
# device -1), rt-rep-peak's failed cudaMalloc and a free of an unknown
# address (tests/data/fuzz-frag-qsort-null.bin); the events view gives the
# old rows back. A database of schema 3 is rebuilt. A database that
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
expect_eq "$(q sample.bin.db "SELECT id, free_id, free_ns, free_tid, free_api, free_flags, free_stack
	FROM allocs ORDER BY id")" "1|3|5000000005|100|7|0|0
2||||||
4||||||" "sample: allocs and their frees"
expect_eq "$(q sample.bin.db "SELECT (SELECT count(*) FROM failures), (SELECT count(*) FROM frees)")" "0|0" \
	"sample: no failures, no other frees"
expect_eq "$(q sample.bin.db "SELECT * FROM event_ex")" "2|20480|24576" "sample: event_ex"
expect_eq "$(q sample.bin.db "SELECT * FROM pools")" "1|102|200|1|24576|2097152|4096|8" "sample: pools"
expect_eq "$(q sample.bin.db "SELECT * FROM meminfo")" "1|103|200|1|1000|2000" "sample: meminfo"
expect_eq "$(q sample.bin.db "SELECT trace, time_ns, tid, hex(text) FROM notes")" \
"1|104|200|68656C6C6F
1|104|200|6122625C6309640A650166FF67C3A968E282" "sample: notes, bytes as recorded"
expect_eq "$(q sample.bin.db "SELECT value FROM meta WHERE key = 'complete'")" 1 "sample: load complete"
expect_eq "$(q sample.bin.db "SELECT count(*) FROM sqlite_temp_master")" 0 "sample: no loader tables left"
# a database of schema 3 (one events row per event) is rebuilt, not reused
q sample.bin.db "UPDATE meta SET value = '3' WHERE key = 'schema_version'; DROP TABLE allocs"
touch sample.bin.db
"$MEMTRACE" report sample.bin >out 2>err || fail "report over a schema 3 database exited $?: $(cat err)"
expect_eq "$(q sample.bin.db "SELECT value FROM meta WHERE key = 'schema_version'")" 4 "schema 3: rebuilt as 4"
expect_eq "$(q sample.bin.db "SELECT count(*) FROM allocs")" 3 "schema 3: rebuilt allocs"

# --- drv-rep-vmm: allocations freed by their first free, a handle released
# while mapped (its row holds the release), unmaps of another device than
# the mapping's (frees rows), allocations never freed (no free_id)
TRACE=$T/vmm.bin traced "$CLIENTS/drv-rep-vmm" >/dev/null 2>run.err || fail "drv-rep-vmm failed: $(cat run.err)"
"$MEMTRACE" report vmm.bin >out 2>err || fail "report of vmm.bin exited $?: $(cat err)"
expect_eq "$(q vmm.bin.db "SELECT id, kind, device, bytes, free_id, free_api FROM allocs ORDER BY id")" \
"1|8|-1|67108864||
2|6|0|2097152|8|25
3|9|-1|2097152||
4|6|0|2097152|11|25
5|9|-1|2097152||
6|6|0|2097152||
7|9|-1|2097152||" "vmm: allocs"
expect_eq "$(q vmm.bin.db "SELECT id, kind, device, api, bytes, alloc_id FROM frees ORDER BY id")" \
"9|9|0|30|2097152|3
10|9|0|30|2097152|5" "vmm: frees"
expect_eq "$(q vmm.bin.db "SELECT group_concat(id || ':' || op || ':' || device || ':' || ifnull(alloc_id, '-'), ' ')
	FROM events")" "1:0:-1:- 2:0:0:- 3:0:-1:- 4:0:0:- 5:0:-1:- 6:0:0:- 7:0:-1:- 8:1:0:2 9:1:0:3 10:1:0:5 11:1:0:4" \
	"vmm: the events view, in order"
expect_eq "$(q vmm.bin.db "SELECT id, free_ns IS NOT NULL FROM allocations ORDER BY id")" "1|0
2|1
3|1
4|1
5|1
6|0
7|0" "vmm: allocations view, an unmap ends its mapping"

# --- rt-rep-peak: the failed cudaMalloc of 2^50 bytes is a failures row
TRACE=$T/peak.bin traced "$CLIENTS/rt-rep-peak" >/dev/null 2>run.err || fail "rt-rep-peak failed: $(cat run.err)"
"$MEMTRACE" report peak.bin >out 2>err || fail "report of peak.bin exited $?: $(cat err)"
expect_eq "$(q peak.bin.db "SELECT id, op, kind, flags, device, api, addr, bytes, result FROM failures")" \
	"10|0|1|128|0|64|0|1125899906842624|2" "peak: failures"
expect_eq "$(q peak.bin.db "SELECT count(*), count(free_id) FROM allocs")" "5|4" "peak: allocs"

# --- bench/gen-ranks writes runtime events (flag 0x80 on the cudaMalloc and
# on the cudaFree): each free is in its allocation's row, with its flags
mkdir g && "$B/bench/gen-ranks" g 1 1000 >/dev/null || fail "gen-ranks failed"
"$MEMTRACE" report --db g.db g/*.bin >out 2>err || fail "report of gen-ranks exited $?: $(cat err)"
expect_eq "$(q g.db "SELECT count(*), count(free_id), sum(flags = 128 AND free_flags = 128) FROM allocs")" \
	"500|500|500" "runtime events: allocs and their frees"
expect_eq "$(q g.db "SELECT count(*) FROM frees")" 0 "runtime events: no other frees"

# --- a free of an address nothing was allocated at (the fuzzer's trace of
# tests/data): a frees row with alloc_id NULL, the free's own bytes
"$MEMTRACE" report --db unk.db "$ROOT/tests/data/fuzz-frag-qsort-null.bin" >out 2>err ||
	fail "report of the unknown free exited $?: $(cat err)"
expect_eq "$(q unk.db "SELECT id, kind, device, bytes, quote(alloc_id) FROM frees")" "4|1|-1|1688850496301567|NULL" \
	"unknown free: frees"
expect_eq "$(q unk.db "SELECT id, free_id FROM allocs ORDER BY id")" "1|2
3|" "unknown free: allocs"

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
expect_eq "$(q big.bin.db "SELECT count(*), count(free_id), sum(free_id > id), sum(free_ns >= time_ns)
	FROM allocs")" "50000|50000|50000|50000" "big: one allocs row per allocation, with its free"
expect_eq "$(q big.bin.db "SELECT (SELECT count(*) FROM failures), (SELECT count(*) FROM frees)")" "0|0" \
	"big: no failures, no other frees"
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
