#!/bin/sh
# What must not be recorded: a descriptor closed behind the library's back
# (raw close system call, dup2 onto it) whose number now names a regular
# file; the library's own trace file; anything in a process that is not
# traced (--no-follow children). And the program's behaviour is unchanged.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-shm-stale" "$T" >"$T/out" 2>"$T/err" || fail "rt-shm-stale failed: $(cat "$T/err")"
pid=$(sed -n 's/^pid //p' "$T/out")
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump"
expect_eq "$(awk '$1 == "shm" { print $4 }' "$T/dump" | tr '\n' ' ')" "op=open op=unlink op=open op=unlink " "only the shared memory calls"
expect_eq "$(count plain "$T/dump")" 0 "the regular file in the trace"

# plain run: same output shape, same exit status
"$CLIENTS/rt-shm-named" >"$T/plain" || fail "rt-shm-named without memtrace"
p2=$(sed -n 's/^pid //p' "$T/plain")
rm -f /dev/shm/mt_shm_"$p2"_*
expect_eq "$(sed 's/[0-9]//g' "$T/plain")" "pid " "plain output"

# --no-follow: the killed worker is not traced, writes no file
rm -f "$T"/trace*.bin
sim "$MEMTRACE" run --no-follow -o "$T/trace.bin" -- "$CLIENTS/rt-shm-worker" fork >"$T/out" 2>"$T/err" ||
	fail "--no-follow run failed: $(cat "$T/err")"
set -- $(cat "$T/out")
rm -f /dev/shm/mt_shm_"$4"_* /dev/shm/mt_shm_"$2"_*
expect_eq "$(ls "$T" | grep -c '^trace.*\.bin$')" 1 "traces with --no-follow"
expect_eq "$("$MEMTRACE" dump "$T/trace.bin" | grep -c '^shm ')" 4 "parent records with --no-follow"

# depth 0: no stacks, records still there
rm -f "$T"/trace*.bin
sim "$MEMTRACE" run --depth 0 -o "$T/trace.bin" -- "$CLIENTS/rt-shm-fd" >"$T/out" 2>"$T/err" || fail "depth 0 run"
rm -f /dev/shm/mt_shm_"$(sed -n 's/^pid //p' "$T/out")"_*
expect_eq "$("$MEMTRACE" dump "$T/trace.bin" | grep -c '^shm .* stack=0$')" 26 "records without stacks"
