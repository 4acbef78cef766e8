#!/bin/sh
# When the trace cannot be written the program runs to completion with its
# own output and exit status, memtrace says once on stderr why the trace is
# incomplete, and what was written loads:
#   - an output directory that does not exist (ENOTDIR),
#   - a file size limit (RLIMIT_FSIZE) hit in the middle of the run,
#   - a program that closes every descriptor and reuses the numbers.
. "$(dirname "$0")/lib.sh"

preload() { LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so "$@"; }

: >"$T/notadir"
MEMTRACE_OUTPUT=$T/notadir/trace.bin preload "$CLIENTS/rt-basic" >"$T/out" 2>"$T/err" ||
	fail "rt-basic failed when the trace cannot be created"
expect_eq "$(grep -c 'memtrace: warning: cannot create trace .*notadir/trace.bin.*: Not a directory; tracing stopped' "$T/err")" 1 "one warning"
expect_eq "$(grep -c . "$T/err")" 1 "stderr lines"
expect_eq "$(tail -n 1 "$T/out")" "done" "program output"

# 2 MiB (dash counts 512-byte blocks; 4 MiB under bash): some 1 MiB
# windows fit, not all 200000 events.
(ulimit -f 4096; MEMTRACE_OUTPUT=$T/limited.bin MEMTRACE_DEPTH=0 preload "$CLIENTS/rt-threads" 1 100000) \
	>"$T/out" 2>"$T/err" || fail "rt-threads failed under a file size limit (exit $?)"
expect_eq "$(cat "$T/out")" "1 threads x 100000 pairs" "program output"
grep -q "memtrace: warning: cannot grow trace .*limited.bin.*File too large; tracing stopped, the program goes on" "$T/err" ||
	fail "no file size warning: $(cat "$T/err")"
"$MEMTRACE" dump "$T/limited.bin" >"$T/dump" || fail "truncated trace does not load"
events=$(grep -cE '^(alloc|free) ' "$T/dump")
[ "$events" -gt 10000 ] && [ "$events" -lt 200000 ] || fail "expected a partial trace, got $events events"

# (The simulator's own log descriptor is closed too: count instead.)
MEMTRACE_OUTPUT=$T/closed.bin MEMTRACE_DEPTH=0 preload "$CLIENTS/rt-closefds" 100000 \
	>"$T/out" 2>"$T/err" || fail "rt-closefds failed: $(cat "$T/err")"
[ -s "$T/err" ] && fail "unexpected stderr: $(cat "$T/err")"
dump_events "$T/closed.bin" >"$T/events"
expect_eq "$(grep -c '^alloc device 0 0x[0-9a-f]* 4096 0$' "$T/events")" 100000 "allocations after the descriptors were closed"
expect_eq "$(grep -c '^free 0x[0-9a-f]* 0$' "$T/events")" 100001 "frees"
