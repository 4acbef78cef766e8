#!/bin/sh
# Garbage in the MEMTRACE_* variables: the program runs and is traced with
# the defaults, and each bad variable is named once on stderr with the value
# used instead, by the run's first process only (not again by the child that
# execs rt-basic, which reads the same environment). Before: not a word.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

# warnings ERRFILE: the warning lines, sorted
warnings() { grep '^memtrace: warning: ' "$1" | sort; }

MEMTRACE_DEPTH=abc MEMTRACE_SAMPLE_MS=x MEMTRACE_FOLLOW=maybe MEMTRACE_RUN_ID=12x \
	traced "$CLIENTS/rt-fork" exec >out 2>err || fail "rt-fork exec: exit $?: $(cat err)"
expect_eq "$(warnings err)" "memtrace: warning: MEMTRACE_DEPTH='abc' is not a whole number from 0 to 256: using 64
memtrace: warning: MEMTRACE_FOLLOW='maybe' is not a whole number from 0 to 1: using 1
memtrace: warning: MEMTRACE_SAMPLE_MS='x' is not a whole number from 0 to 86400000: using 100" \
	"the warnings, once each"
# memtrace run sets MEMTRACE_RUN_ID itself: the user's garbage never arrives
# the defaults were used: 64 frames at most (stacks are there), the child followed
"$MEMTRACE" dump trace.bin | grep -q '^stack id=1 depth=[1-9]' || fail "depth: no stacks with the default 64"
expect_eq "$(ls | grep -c '^trace\.[0-9]*\.bin$')" 1 "FOLLOW=maybe: the exec'd child traced (default 1)"
child=$(ls | grep '^trace\.[0-9]*\.bin$')
expect_eq "$(dump_events "$child" | wc -l)" 8 "the child's events (rt-basic: 4 allocations, 4 frees)"

for v in -3 99999 ''; do
	rm -f trace*.bin
	MEMTRACE_DEPTH=$v traced "$CLIENTS/rt-basic" >out 2>err || fail "rt-basic: exit $?: $(cat err)"
	if [ -n "$v" ]; then
		expect_eq "$(warnings err)" "memtrace: warning: MEMTRACE_DEPTH='$v' is not a whole number from 0 to 256: using 64" \
			"MEMTRACE_DEPTH=$v"
	else
		expect_eq "$(warnings err)" "" "MEMTRACE_DEPTH empty: the default, without a word"
	fi
	expect_eq "$(dump_events trace.bin | wc -l)" 8 "MEMTRACE_DEPTH=$v: rt-basic's events"
done

# Without memtrace run, a bad MEMTRACE_RUN_ID is named too
LD_LIBRARY_PATH=$SIM MEMTRACE_OUTPUT=$T/direct.bin MEMTRACE_RUN_ID=12x LD_PRELOAD=$B/libmemtrace.so \
	"$CLIENTS/rt-basic" >out 2>err || fail "rt-basic preloaded: exit $?: $(cat err)"
expect_eq "$(warnings err)" "memtrace: warning: MEMTRACE_RUN_ID='12x' is not a whole number: using 0" "MEMTRACE_RUN_ID=12x"
exit 0
