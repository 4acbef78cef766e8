#!/bin/sh
# t408-rob-top-once-missing: `memtrace top --once` on a trace that is not
# there, is not a file or is not a trace says so in one line and fails, as
# `memtrace report` does (issue 25, row 12): never an empty frame and exit
# 0, which a script would read as "nothing allocated".
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

mt() { "$MEMTRACE" "$@" >out 2>err; rc=$?; }

mt top --once "$T/nonexist.bin"
expect_eq "$rc" 2 "missing trace: exit status"
expect_eq "$(cat err)" "memtrace: cannot open '$T/nonexist.bin': No such file or directory" \
	"missing trace: stderr"
expect_eq "$(cat out)" "" "missing trace: no frame"
# report says the same of it, with the same status
mt report "$T/nonexist.bin"
expect_eq "$rc" 2 "report of the missing trace: exit status"

mt top --once --bytes "$T"
expect_eq "$rc" 2 "a folder: exit status"
expect_eq "$(cat err)" "memtrace: cannot read '$T': not a file" "a folder: stderr"

printf 'not a trace\n' >junk.bin
mt top --once junk.bin
expect_eq "$rc" 1 "not a trace: exit status"
expect_eq "$(cat err)" "memtrace: 'junk.bin': not a memtrace trace (bad magic)" "not a trace: stderr"
expect_eq "$(cat out)" "" "not a trace: no frame"
mt report junk.bin
expect_eq "$rc" 1 "report of junk: exit status"

# a real trace still gives its frame
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
traced "$SAMPLES/leak" >/dev/null 2>&1 || fail "leak sample failed"
mt top --once trace.bin
expect_eq "$rc" 0 "a trace: exit status"
grep -q '^memtrace top: 1 process' out || fail "a trace: no frame: $(head -3 out)"
