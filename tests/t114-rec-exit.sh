#!/bin/sh
# How each process ended: exit(3), a return from main, _Exit(9), _exit(5) in
# a forked child (its own trace), _exit(6) in a vfork child (which shares the
# parent's memory and writes nothing), SIGKILL (no exit record, every
# returned call still there). The exit record is the last record in time and
# the only one; the program's output, exit status and driver calls are the
# same as without memtrace.
. "$(dirname "$0")/lib.sh"

# ends TRACE: the trace's exit records, "how=H status=S" each
ends() {
	"$MEMTRACE" dump "$1" | awk '$1 == "exit" { print $4, $5 }'
}

# last TRACE: the record with the greatest time (the first of equals)
last() {
	"$MEMTRACE" dump "$1" | awk '{
		for (i = 2; i <= NF; i++) if ($i ~ /^time=\+/) {
			t = substr($i, 7) + 0
			if (!seen || t > max) { max = t; rec = $1 }
			seen = 1
		}
	} END { print rec }'
}

# run MODE N: the client plain and traced; same status, output, driver calls
run() {
	rm -f "$T"/trace*.bin "$T"/*.log
	SIMCUDA_LOG=$T/plain.log sim "$CLIENTS/rt-exit" "$@" >"$T/plain.out" 2>"$T/plain.err"
	plain=$?
	SIMCUDA_LOG=$T/calls.log traced "$CLIENTS/rt-exit" "$@" >"$T/out" 2>"$T/err"
	status=$?
	expect_eq "$status" "$plain" "rt-exit $*: exit status under memtrace"
	diff -u "$T/plain.out" "$T/out" >/dev/null || fail "rt-exit $*: output differs under memtrace"
	sed 's/ pid=[0-9]*$//' "$T/plain.log" >"$T/plain.calls"
	sed 's/ pid=[0-9]*$//' "$T/calls.log" >"$T/traced.calls"
	diff -u "$T/plain.calls" "$T/traced.calls" >/dev/null || fail "rt-exit $*: the driver saw different calls"
}

run exit 3
expect_eq "$status" 3 "exit(3): status"
expect_eq "$(cat "$T/out")" "rt-exit exit 3" "exit(3): output"
expect_eq "$(ends "$T/trace.bin")" "how=exit status=3" "exit(3): exit record"
same_events "$T/trace.bin" "$T/calls.log"
# the free of the atexit handler is recorded, before the end
expect_eq "$(dump_events "$T/trace.bin" | grep -c '^free ')" 2 "exit(3): frees, the atexit handler's included"
expect_eq "$(last "$T/trace.bin")" exit "exit(3): the last record in time"
"$MEMTRACE" dump "$T/trace.bin" | head -n 1 | grep -q "^# trace '.*': format 2\.2, " || fail "exit(3): not format 2"

run return
expect_eq "$status" 0 "return 0: status"
expect_eq "$(ends "$T/trace.bin")" "how=exit status=0" "return 0 from main: exit record"
same_events "$T/trace.bin" "$T/calls.log"
expect_eq "$(last "$T/trace.bin")" exit "return 0: the last record in time"

run _Exit 9
expect_eq "$status" 9 "_Exit(9): status"
expect_eq "$(ends "$T/trace.bin")" "how=_exit status=9" "_Exit(9): exit record"
same_events "$T/trace.bin" "$T/calls.log"

run fork 5
expect_eq "$status" 0 "fork: parent status"
expect_eq "$(cat "$T/out")" "rt-exit fork 5
child status 5" "fork: output"
child=$(ls "$T" | grep -E '^trace\.[0-9]+\.bin$')
[ -n "$child" ] || fail "fork: no child trace: $(ls "$T")"
cpid=$(echo "$child" | cut -d. -f2)
expect_eq "$(ends "$T/$child")" "how=_exit status=5" "fork: the child's _exit(5)"
same_events "$T/$child" "$T/calls.log" "$cpid"
expect_eq "$(last "$T/$child")" exit "fork: the child's last record in time"
expect_eq "$(ends "$T/trace.bin")" "how=exit status=0" "fork: the parent's exit record"
expect_eq "$(dump_events "$T/trace.bin" | wc -l)" 4 "fork: the parent's events"

run vfork 6
expect_eq "$(cat "$T/out")" "rt-exit vfork 6
child status 6" "vfork: output"
expect_eq "$(ls "$T" | grep -c '^trace.*\.bin$')" 1 "vfork: traces"
expect_eq "$(ends "$T/trace.bin")" "how=exit status=0" "vfork: the parent's exit record, not the child's _exit"
same_events "$T/trace.bin" "$T/calls.log"

run kill
expect_eq "$status" 137 "SIGKILL: status"
expect_eq "$(ends "$T/trace.bin")" "" "SIGKILL: exit records"
same_events "$T/trace.bin" "$T/calls.log"
expect_eq "$(dump_events "$T/trace.bin" | wc -l)" 3 "SIGKILL: events before the kill"
exit 0
