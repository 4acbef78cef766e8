#!/bin/sh
# 16 threads allocating and freeing at once: no event lost or doubled (the
# trace against the simulator's log, event by event), no deadlock, the same
# output as without memtrace. (bench/ runs the 16 x 1M version.)
. "$(dirname "$0")/lib.sh"

MEMTRACE_DEPTH=8 timeout 120 sh -c '
	LD_LIBRARY_PATH='"$SIM"' SIMCUDA_LOG='"$T"'/calls.log \
	'"$MEMTRACE"' run -o '"$T"'/trace.bin -- '"$CLIENTS"'/rt-threads 16 20000' >"$T/out" 2>"$T/err" ||
	fail "rt-threads failed or hung: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "16 threads x 20000 pairs" "client output"
same_events "$T/trace.bin" "$T/calls.log"
expect_eq "$(grep -c '^alloc' "$T/events.trace")" 320000 "allocations"
expect_eq "$(grep -c '^free' "$T/events.trace")" 320000 "frees"
# Each thread wrote its own slabs: 16 allocating threads (+ main).
tids=$("$MEMTRACE" dump "$T/trace.bin" | awk '$1 == "alloc" { for (i = 2; i <= NF; i++) if ($i ~ /^tid=/) print $i }' | sort -u | wc -l)
expect_eq "$tids" 16 "threads seen"
