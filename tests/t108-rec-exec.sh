#!/bin/sh
# fork + exec (a DataLoader or torchrun worker): the new image is traced
# into its own file with its own events; --no-follow traces the first
# process only.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-fork" exec >"$T/out" 2>"$T/err" || fail "rt-fork exec failed: $(cat "$T/err")"
child=$(ls "$T" | grep -E '^trace\.[0-9]+\.bin$')
[ -n "$child" ] || fail "no trace for the exec'd worker: $(ls "$T")"
cpid=$(echo "$child" | cut -d. -f2)
same_events "$T/$child" "$T/calls.log" "$cpid"
"$MEMTRACE" dump "$T/$child" | grep -q 'cmdline="rt-basic"' || fail "exec'd image's command line"
expect_eq "$("$MEMTRACE" dump "$T/$child" | grep -c '^alloc .* api=cudaMalloc ')" 4 "rt-basic's allocations in the worker trace"

rm -f "$T"/trace*.bin "$T/calls.log"
sim "$MEMTRACE" run --no-follow -o "$T/trace.bin" -- "$CLIENTS/rt-fork" exec >"$T/out" 2>"$T/err" || fail "--no-follow run failed"
expect_eq "$(ls "$T" | grep -c '^trace.*\.bin$')" 1 "traces with --no-follow"
