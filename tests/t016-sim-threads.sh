#!/bin/sh
# The simulated driver under 16 threads allocating and freeing at once
# (1M pairs in all), every allocation accounted for; then a forked child
# that allocates (the lock survives fork); the call log has one whole line
# per operation.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM "$CLIENTS/drv-sim-threads" 16 65536 >"$T/out" || fail "drv-sim-threads exited $?"
cat >"$T/expected" <<'END'
failures 0, free before 85584773120 after 85584773120
child 0
END
diff -u "$T/expected" "$T/out" || fail "threads differ"

LD_LIBRARY_PATH=$SIM SIMCUDA_LOG=$T/calls.log "$CLIENTS/drv-sim-threads" 4 1000 >"$T/out" ||
	fail "drv-sim-threads exited $?"
expect_eq "$(grep -c '^alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x5[0-9a-f]* size=[0-9]* charged=[0-9]* result=0 pid=[0-9]*$' "$T/calls.log")" 4001 "alloc lines"
expect_eq "$(grep -c '^free fn=cuMemFree_v2 kind=device dev=0 addr=0x5[0-9a-f]* size=[0-9]* charged=[0-9]* result=0 pid=[0-9]*$' "$T/calls.log")" 4001 "free lines"
expect_eq "$(wc -l <"$T/calls.log")" 8002 "log lines"
expect_eq "$(awk '{ print $NF }' "$T/calls.log" | sort -u | wc -l)" 2 "pids in the log"
exit 0
