#!/bin/sh
# A live trace file cut by another process (log rotation with copytruncate,
# `: > trace.bin`, `truncate -s`) while the program allocates in a loop
# (issue 25 row 4): the program goes on with its own output and exit status
# (it used to die of SIGBUS, exit 135), the recorder stops that trace, the
# file says what happened (its header written back, or a note after what is
# left), the launcher says it in one line, and `check` fails on the lost
# records. SIGBUS that is not memtrace's still reaches the program's own
# handler, or kills the program when it has none.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
C=$CLIENTS/rt-rotate
preload() { LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so "$@"; }

# cut FILE... : once a FILE holds a slab beyond the first, run the rest
# (FILE may be a glob, for a child's trace.PID.bin)
wait_trace() {
	i=0
	while [ $i -lt 200 ]; do
		for f in $1; do
			[ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 200000 ] && { echo "$f"; return 0; }
		done
		sleep 0.02
		i=$((i + 1))
	done
	return 1
}

# --- the library alone, `: >`: one warning, the header written back
MEMTRACE_OUTPUT=$T/a.bin preload "$C" 1200 >out 2>err &
pid=$!
f=$(wait_trace a.bin) || fail "a.bin never grew"
: >"$f"
wait $pid
expect_eq "$?" 0 "cut, library alone: exit status"
expect_eq "$(cat out)" "done after 1200 ms" "cut, library alone: program output"
expect_eq "$(cat err)" "memtrace: warning: trace '$T/a.bin' was cut by another process while it was written (log rotation?); tracing stopped, the program goes on" "cut, library alone: stderr"
expect_eq "$(stat -c %s a.bin)" 64 "cut, library alone: the header written back"
"$MEMTRACE" report a.bin >rep 2>&1 || fail "cut, library alone: report refused the trace: $(cat rep)"
grep -q "holds no records" rep || fail "cut, library alone: report does not warn: $(cat rep)"
"$MEMTRACE" check 'peak <= 1GiB' a.bin >chk 2>&1 && fail "cut, library alone: check passed lost records: $(cat chk)"

# --- under memtrace run, copytruncate (copy, then cut): the program's
# status through a shell, its output, one line that says it, the copy loads
MEMTRACE_OUTPUT= LD_LIBRARY_PATH=$SIM "$MEMTRACE" run -o b.bin -- sh -c '"$0" 1200; exit 3' "$C" >out 2>err &
pid=$!
f=$(wait_trace 'b.*.bin') || fail "b.PID.bin never grew"
cp "$f" rotated.1 && : >"$f"
wait $pid
expect_eq "$?" 3 "copytruncate under run: exit status"
expect_eq "$(cat out)" "done after 1200 ms" "copytruncate under run: program output"
child=${f#b.}; child=${child%.bin}
expect_eq "$(cat err)" "memtrace: warning: '$f' was cut by another process while pid $child ran (log rotation with copytruncate, or ': >'?): its records are lost; tracing stopped there, the program went on
memtrace: wrote $f (1 process); next: memtrace report $f" "copytruncate under run: stderr"
"$MEMTRACE" report rotated.1 >rep 2>&1 || fail "copytruncate: the rotated copy does not load: $(cat rep)"
grep -q "rt-rotate.c" rep || fail "copytruncate: the rotated copy has no allocations: $(head -5 rep)"
# the gate fails on it
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --check 'peak <= 1GiB' -o c.bin -- "$C" 1200 >out 2>err &
pid=$!
f=$(wait_trace c.bin) || fail "c.bin never grew"
: >"$f"
wait $pid
rc=$?
[ $rc = 0 ] && fail "run --check passed a trace whose records were cut: $(cat err)"
[ $rc = 135 ] && fail "run --check: the program died of SIGBUS"
expect_eq "$(head -n 1 out)" "done after 1200 ms" "run --check: program output"
grep -q "^FAIL trace intact: .*holds no records" out || fail "run --check: the check does not say why: $(cat out)"

# --- truncate -s: what is left loads, with the recorder's note after it
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o d.bin -- "$C" 1500 >out 2>err &
pid=$!
f=$(wait_trace d.bin) || fail "d.bin never grew"
truncate -s 150000 "$f"
wait $pid
expect_eq "$?" 0 "truncate -s under run: exit status"
expect_eq "$(sed -E 's/pid [0-9]+/pid P/g; s/[0-9]+ events/N events/' err)" \
"memtrace: warning: 'd.bin' was cut by another process while pid P ran (log rotation with copytruncate, or ': >'?): the records after the cut are lost; tracing stopped there, the program went on
memtrace: wrote d.bin (pid P, N events)" "truncate -s under run: stderr"
"$MEMTRACE" report d.bin >rep 2>&1 || fail "truncate -s: report refused: $(cat rep)"
grep -q "from the recorder: trace cut by another process" rep || fail "truncate -s: no note in the report"
grep -q "rt-rotate.c" rep || fail "truncate -s: the records before the cut are gone"

# --- the program's own SIGBUS handler, installed after memtrace's: it
# gets its own fault and a kill, and sigaction answers with it; the cut
# trace is still memtrace's to handle
MEMTRACE_OUTPUT=$T/e.bin preload "$C" 1200 --own-sigbus >out 2>err &
pid=$!
f=$(wait_trace e.bin) || fail "e.bin never grew"
: >"$f"
wait $pid
expect_eq "$?" 0 "own handler: exit status"
expect_eq "$(cat out)" "own handler: 1 fault, 1 kill
done after 1200 ms" "own handler: program output"
grep -q "was cut by another process" err || fail "own handler: the cut was not said: $(cat err)"

# --- no handler of its own: a SIGBUS of the program's still kills it, as
# without memtrace (and under run, 135)
MEMTRACE_OUTPUT=$T/g.bin preload "$C" 10 --die >out 2>err
expect_eq "$?" 135 "the program's own fault: exit status"
expect_eq "$(cat out)" "faulting" "the program's own fault: output"
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o h.bin -- "$C" 10 --die >out 2>err
expect_eq "$?" 135 "the program's own fault under run: exit status"
expect_eq "$(cat out)" "faulting" "the program's own fault under run: output"
exit 0
