#!/bin/sh
# fork while another thread allocates: the child writes its own trace
# (STEM.PID.bin), valid, with exactly its own events; it does not hang; the
# parent's trace holds none of the child's events.
. "$(dirname "$0")/lib.sh"

timeout 60 sh -c 'LD_LIBRARY_PATH='"$SIM"' SIMCUDA_LOG='"$T"'/calls.log \
	'"$MEMTRACE"' run --no-summary -o '"$T"'/trace.bin -- '"$CLIENTS"'/rt-fork' >"$T/out" 2>"$T/err" ||
	fail "rt-fork failed or hung: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "child status 0" "client output"
child=$(ls "$T" | grep -E '^trace\.[0-9]+\.bin$')
[ -n "$child" ] || fail "no child trace: $(ls "$T")"
cpid=$(echo "$child" | cut -d. -f2)
grep -q "wrote $T/$child (pid $cpid, 4 events)" "$T/err" || fail "run did not list the child trace: $(cat "$T/err")"
same_events "$T/$child" "$T/calls.log" "$cpid"
ppid=$("$MEMTRACE" dump "$T/trace.bin" | awk '$1 == "process" { split($2, kv, "="); print kv[2] }')
same_events "$T/trace.bin" "$T/calls.log" "$ppid"
"$MEMTRACE" dump "$T/$child" | grep -q "^process pid=$cpid ppid=$ppid " || fail "child process record"
