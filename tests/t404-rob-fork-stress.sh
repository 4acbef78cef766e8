#!/bin/sh
# Many forks in a loop while 4 threads allocate: 40 children, each
# allocating, freeing and exiting (half through exit(), half _exit()), every
# one with a timeout. No child hangs, every child's trace (STEM.PID.bin) is
# valid and holds exactly its own calls, and the parent's trace holds exactly
# the parent's, the 4 threads' events included.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
FORKS=${FORKS:-40}

timeout 120 sh -c 'LD_LIBRARY_PATH='"$SIM"' SIMCUDA_LOG=calls.log \
	'"$MEMTRACE"' run --no-summary --depth 4 -o trace.bin -- '"$CLIENTS"'/rt-rob-forkstress '$FORKS >out 2>err ||
	fail "fork stress failed or hung (exit $?): $(grep -v '^memtrace: wrote' err | head)"
expect_eq "$(cat out)" "$FORKS forks, $FORKS children ok" "client output"
ppid=$("$MEMTRACE" dump trace.bin | awk '$1 == "process" { split($2, kv, "="); print kv[2] }')
ls | grep -E '^trace\.[0-9]+\.bin$' | sed 's/^trace\.//; s/\.bin$//' | sort -n >children
expect_eq "$(grep -c . children)" "$FORKS" "child traces"
expect_eq "$(grep -c '^memtrace: wrote ' err)" $((FORKS + 1)) "traces listed"

# the simulator's log, split by pid once (a child's file is closed after
# each of its few lines: awk keeps only so many files open)
awk -v parent="$ppid" '{ for (i = NF; i > 0; i--) if ($i ~ /^pid=/) {
		p = substr($i, 5); f = "log." p
		print >> f
		if (p != parent) close(f)
		next } }' calls.log
same_events trace.bin "log.$ppid"
expect_eq "$(grep -c ' 1048576 0$' events.trace)" 1 "parent's own allocation"
while read -r cpid; do
	"$MEMTRACE" dump "trace.$cpid.bin" >dump 2>dump.err || fail "child $cpid: trace does not load: $(cat dump.err)"
	[ -s dump.err ] && fail "child $cpid: unexpected warning: $(cat dump.err)"
	grep -q "^process pid=$cpid ppid=$ppid " dump || fail "child $cpid: process record"
	[ -f "log.$cpid" ] || fail "child $cpid: no calls in the simulator log"
	same_events "trace.$cpid.bin" "log.$cpid"
	expect_eq "$(grep -c . events.trace)" 3 "child $cpid: events"
done <children
exit 0
