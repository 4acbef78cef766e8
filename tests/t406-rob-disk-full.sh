#!/bin/sh
# A full disk (a 2 MiB tmpfs) and an output directory that cannot be
# written even by root (a read-only mount; chmod 0555 when not root): the
# program runs to completion with its own output and exit status, memtrace
# says once on stderr why the trace is incomplete, and what was written
# loads. Needs mount(2) as root, or skips.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
mkdir full ro
if [ "$(id -u)" = 0 ]; then
	mount -t tmpfs -o size=2m memtrace-test "$T/full" 2>mount.err ||
		skip "cannot mount a tmpfs: $(cat mount.err)"
	# lib.sh's cleanup, after unmounting
	trap 'rc=$?; cd /; umount "$T/full" 2>/dev/null; umount "$T/ro" 2>/dev/null
		if [ $rc = 0 ] || [ $rc = 77 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT
	mount -t tmpfs -o ro,size=1m memtrace-test "$T/ro" || fail "cannot mount a read-only tmpfs"
else
	skip "a full disk needs a tmpfs mount, which needs root"
fi
preload() { LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so "$@"; }

# --- full disk, the library alone: 2 MiB hold the first windows only
MEMTRACE_OUTPUT=$T/full/trace.bin MEMTRACE_DEPTH=0 preload "$CLIENTS/rt-threads" 2 100000 >out 2>err
expect_eq "$?" 0 "full disk: exit status"
expect_eq "$(cat out)" "2 threads x 100000 pairs" "full disk: program output"
expect_eq "$(cat err)" "memtrace: warning: cannot grow trace '$T/full/trace.bin': No space left on device; tracing stopped, the program goes on" "full disk: stderr"
"$MEMTRACE" dump full/trace.bin >dump 2>dump.err || fail "full disk: the trace does not load: $(cat dump.err)"
events=$(grep -cE '^(alloc|free) ' dump)
[ "$events" -gt 1000 ] && [ "$events" -lt 400000 ] || fail "full disk: expected a partial trace, got $events events"
# every alloc in the trace is one the program made: sizes cycle 256 B .. 1 MiB
expect_eq "$(awk '$1 == "alloc"' dump | grep -cvE ' bytes=(256|512|1024|2048|4096|8192|16384|32768|65536|131072|262144|524288|1048576) result=0 ')" 0 "full disk: allocations that are not the program's"
rm -f full/*

# --- full disk under `memtrace run`: the command's status, the warning,
# the trace listed (rt-threads is the shell's child: full/run.PID.bin)
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary --depth 0 -o full/run.bin -- sh -c '"$0" 1 200000; exit 3' "$CLIENTS/rt-threads" >out 2>err
expect_eq "$?" 3 "full disk under run: exit status"
expect_eq "$(cat out)" "1 threads x 200000 pairs" "full disk under run: program output"
expect_eq "$(sed -E 's/run\.[0-9]+\.bin/run.PID.bin/; s/pid [0-9]+, [0-9]+ events/pid P, N events/' err)" \
"memtrace: warning: cannot grow trace '$T/full/run.PID.bin': No space left on device; tracing stopped, the program goes on
memtrace: wrote full/run.PID.bin (pid P, N events)" "full disk under run: stderr"
"$MEMTRACE" dump full/run.*.bin >/dev/null 2>dump.err || fail "full disk under run: the trace does not load"

# --- a read-only output directory: nothing written, the program unharmed
MEMTRACE_OUTPUT=$T/ro/trace.bin preload "$CLIENTS/rt-basic" >out 2>err
expect_eq "$?" 0 "read-only directory: exit status"
expect_eq "$(tail -n 1 out)" "done" "read-only directory: program output"
expect_eq "$(cat err)" "memtrace: warning: cannot create trace '$T/ro/trace.bin': Read-only file system; tracing stopped, the program goes on" "read-only directory: stderr"
expect_eq "$(ls ro | wc -l)" 0 "read-only directory: files"
# `memtrace run` checks first and refuses before running anything
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o ro/trace.bin -- "$CLIENTS/rt-basic" >out 2>err
expect_eq "$?" 2 "run into a read-only directory: exit status"
expect_eq "$(cat err)" "memtrace: cannot write to '$T/ro': Read-only file system" "run into a read-only directory: stderr"
[ -s out ] && fail "run into a read-only directory ran the command"
exit 0
