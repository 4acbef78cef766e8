#!/bin/sh
# One trace named twice counts once: by another path (./x/../trace.bin),
# by a hard link, and as a copy of the file (the same process: run id, pid,
# start). rt-basic: 8 events (3 allocations, 3 frees, a failed allocation
# and a failed free), peak 64 MiB + 1 MiB + 3000 B. Each name left out gets
# a note on stderr. Before: every figure doubled (16 events, two processes).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

traced "$CLIENTS/rt-basic" >out 2>err || fail "rt-basic failed: $(cat err)"
mkdir x
ln trace.bin hard.bin
cp trace.bin copy.bin
"$MEMTRACE" report --no-db --json trace.bin >one.json 2>one.err || fail "report of one trace failed"
expect_eq "$(jnum events one.json)" 8 "one trace: events"
expect_eq "$(jnum peak_reserved_bytes one.json)" 68160440 "one trace: peak"

# check NAME ARGS...: the report of ARGS is the report of trace.bin
check() {
	what=$1
	shift
	"$MEMTRACE" report --no-db --json "$@" >two.json 2>two.err || fail "$what: report failed: $(cat two.err)"
	expect_eq "$(grep -c '"ppid"' two.json)" 1 "$what: processes"
	expect_eq "$(jnum events two.json)" 8 "$what: events"
	expect_eq "$(jnum peak_reserved_bytes two.json)" 68160440 "$what: peak"
	# every figure as with one name (the trace's name is the first one)
	diff one.json two.json >/dev/null || fail "$what: the report differs from one trace's:
$(diff one.json two.json | head -n 10)"
}

check "./x/../trace.bin" trace.bin ./x/../trace.bin
expect_eq "$(cat two.err)" "memtrace: warning: './x/../trace.bin' is the same file as 'trace.bin': counted once" \
	"../: the note"
check "hard link" trace.bin hard.bin
expect_eq "$(cat two.err)" "memtrace: warning: 'hard.bin' is the same file as 'trace.bin': counted once" \
	"hard link: the note"
pid=$("$MEMTRACE" dump trace.bin | sed -n '1s/.*, pid \([0-9]*\),.*/\1/p')
check "copy" trace.bin copy.bin
expect_eq "$(cat two.err)" "memtrace: warning: 'trace.bin' and 'copy.bin' are traces of the same process (pid $pid): counted once, from 'trace.bin'" \
	"copy: the note"
check "all four" trace.bin ./x/../trace.bin hard.bin copy.bin
expect_eq "$(wc -l <two.err)" 3 "all four: one note per name left out"
exit 0
