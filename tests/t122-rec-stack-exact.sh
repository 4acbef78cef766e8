#!/bin/sh
# Every stack the recorder writes is the one a full unwind gives, on call
# paths that fool an unwind cache (tests/clients/drv-stack-exact.c: alloca
# and realigned frames behind one indirect call site, tail calls, longjmp,
# swapcontext fibers, signal handlers, random recursion, threads reusing a
# dead thread's stack; also built at -O0 and with frame pointers; and the
# bench's varied paths). MEMTRACE_STACK_CHECK=1 unwinds each stack again with
# unw_backtrace in the same run and notes any difference; and a run with
# MEMTRACE_STACK_CACHE=0 makes the same stacks, frame for frame.
. "$(dirname "$0")/lib.sh"

MODES="alloca align tail longjmp fiber signal recursion threads"
for m in $MODES; do
	TRACE=$T/$m.bin MEMTRACE_STACK_CHECK=1 traced "$CLIENTS/drv-stack-exact" $m >"$T/out" 2>"$T/err" ||
		fail "drv-stack-exact $m failed: $(cat "$T/err")"
	"$MEMTRACE" dump "$T/$m.bin" >"$T/$m.dump" || fail "dump of $m failed"
	bad=$(grep -c 'stack check' "$T/$m.dump")
	expect_eq "$bad" 0 "$m: stacks that differ from a full unwind: $(grep -m3 'stack check' "$T/$m.dump")"
	zero=$(grep -E '^(alloc|free) ' "$T/$m.dump" | grep -c 'stack=0 ')
	expect_eq "$zero" 0 "$m: events without a stack"
done

# The same client at -O0 (every frame rbp-based) and with frame pointers.
for v in o0 fp; do
	TRACE=$T/$v.bin MEMTRACE_STACK_CHECK=1 traced "$CLIENTS/drv-stack-exact-$v" all >/dev/null 2>"$T/err" ||
		fail "drv-stack-exact-$v all failed: $(cat "$T/err")"
	"$MEMTRACE" dump "$T/$v.bin" >"$T/$v.dump" || fail "dump failed"
	expect_eq "$(grep -c 'stack check' "$T/$v.dump")" 0 "$v: stacks that differ from a full unwind: $(grep -m3 'stack check' "$T/$v.dump")"
	expect_eq "$(grep -cE '^(alloc|free) ' "$T/$v.dump")" 736 "$v: events"
done

# The walk without the memo (MEMTRACE_STACK_CACHE=2), all modes at once.
TRACE=$T/walk.bin MEMTRACE_STACK_CHECK=1 MEMTRACE_STACK_CACHE=2 traced "$CLIENTS/drv-stack-exact" all >/dev/null 2>"$T/err" ||
	fail "drv-stack-exact all (no memo) failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/walk.bin" >"$T/walk.dump" || fail "dump failed"
expect_eq "$(grep -c 'stack check' "$T/walk.dump")" 0 "no memo: stacks that differ from a full unwind: $(grep -m3 'stack check' "$T/walk.dump")"

norm() { # DUMP: each event's stack as module+offset frames, in event order
	awk "$AWK_HEX"'
	$1 == "module" { delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		n = split(f["path"], p, "/"); m++; lo[m] = hex(f["start"]); hi[m] = hex(f["end"]); name[m] = p[n] }
	$1 == "stack" { split($2, kv, "="); t = ""
		for (i = 4; i <= NF; i++) { x = hex($i); w = "?"
			for (j = 1; j <= m; j++) if (x >= lo[j] && x < hi[j]) { w = name[j] "+" (x - lo[j]); break }
			t = t " " w }
		s[kv[2]] = t }
	$1 == "alloc" || $1 == "free" { for (i = 2; i <= NF; i++) if ($i ~ /^stack=/) { split($i, kv, "="); print $1 s[kv[2]] } }' "$1"
}
TRACE=$T/on.bin traced "$CLIENTS/drv-stack-exact" all >/dev/null 2>&1 || fail "run with the cache failed"
TRACE=$T/off.bin MEMTRACE_STACK_CACHE=0 traced "$CLIENTS/drv-stack-exact" all >/dev/null 2>&1 ||
	fail "run without the cache failed"
"$MEMTRACE" dump "$T/on.bin" >"$T/on.dump" && "$MEMTRACE" dump "$T/off.bin" >"$T/off.dump" || fail "dump failed"
norm "$T/on.dump" >"$T/on"
norm "$T/off.dump" >"$T/off"
expect_eq "$(wc -l <"$T/on")" 736 "events of all modes"
grep -q 'drv-stack-exact"*+' "$T/on" || fail "no frame in the client: $(head -3 "$T/on")"
diff -u "$T/off" "$T/on" >"$T/diff" || fail "stacks differ from a full unwind: $(head -20 "$T/diff")"
# The paths are told apart: callerA and callerB of each trap have stacks of their own.
expect_eq "$(sort -u "$T/on" | wc -l)" "$(sort -u "$T/off" | wc -l)" "distinct stacks"

# The bench's varied paths (bench/paths.c), checked the same way: the memo's
# resumed and spliced walks on 16 and 1,024 random paths, random recursion,
# a deep common tail, 8 threads.
[ -x "$B/bench/paths" ] || skip "no $B/bench/paths (make tests-build)"
for a in "1 3000 16 rand 0" "1 6000 1024 rand 0" "1 3000 rec rand 0" "1 2000 16 rand 50" "8 500 16 rand 0" "1 2000 4 seq 0"; do
	rm -f "$T"/p*.bin
	sim env LD_PRELOAD="$B/libmemtrace.so" MEMTRACE_OUTPUT="$T/p.bin" MEMTRACE_STACK_CHECK=1 "$B/bench/paths" $a \
		>/dev/null 2>"$T/err" || fail "paths $a failed: $(cat "$T/err")"
	"$MEMTRACE" dump "$T/p.bin" >"$T/p.dump" || fail "dump of paths $a failed"
	expect_eq "$(grep -c 'stack check' "$T/p.dump")" 0 "paths $a: stacks that differ from a full unwind: $(grep -m3 'stack check' "$T/p.dump")"
	set -- $a
	expect_eq "$(grep -cE '^(alloc|free) ' "$T/p.dump")" $(($1 * $2 * 2)) "paths $a: events"
done
