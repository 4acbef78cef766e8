#!/bin/sh
# The trace is created 0600 whatever the umask, and never through a
# symlink: a symlink planted at the output path (pointing to an existing
# file, or dangling) is left alone, its target untouched (or not created),
# and the program runs normally. The library does not follow it: as for any
# name that exists, it writes STEM.PID.bin beside it (docs/environment.md).
# `memtrace run` refuses such an output before it starts (t202).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
preload() { LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so "$@"; }

(umask 0; MEMTRACE_OUTPUT=$T/plain.bin preload "$CLIENTS/rt-basic" >out 2>err) || fail "rt-basic failed"
expect_eq "$(stat -c %a plain.bin)" 600 "mode of a trace created under umask 0"
[ -s err ] && fail "unexpected stderr: $(cat err)"

echo precious >victim
ln -s victim planted.bin
(umask 0; MEMTRACE_OUTPUT=$T/planted.bin preload "$CLIENTS/rt-rob-execloop" 0 >out 2>err)
expect_eq "$?" 0 "exit status with a symlink at the output"
expect_eq "$(cat out)" "done" "program output"
expect_eq "$(cat victim)" "precious" "symlink target"
[ -L planted.bin ] || fail "the symlink was replaced"
expect_eq "$(ls | grep -c '^planted\.[0-9]*\.bin$')" 1 "trace written beside the symlink"
f=$(ls | grep '^planted\.[0-9]*\.bin$')
[ -L "$f" ] && fail "$f is a symlink"
expect_eq "$(stat -c %a "$f")" 600 "mode of $f"
expect_eq "$(dump_events "$f" | sed -E 's/0x[0-9a-f]+/A/' | sort | tr '\n' ,)" \
	"alloc device 0 A 1048576 0,alloc device 0 A 4096 0,free A 0," "events in $f"

# a dangling symlink: its target must not be created through it
ln -s "$T/created-through-link" dangling.bin
MEMTRACE_OUTPUT=$T/dangling.bin preload "$CLIENTS/rt-rob-execloop" 0 >out 2>err || fail "exit status with a dangling symlink"
[ -e created-through-link ] && fail "the library created a file through a dangling symlink"
expect_eq "$(ls | grep -c '^dangling\.[0-9]*\.bin$')" 1 "trace written beside the dangling symlink"

# a child's name (STEM.PID.bin) planted: STEM.PID.1.bin is used instead
# (the shell plants it under its own pid, then execs the client in place)
MEMTRACE_ROOT_PID=1 MEMTRACE_OUTPUT=$T/child.bin LD_LIBRARY_PATH=$SIM sh -c '
	ln -s victim child.$$.bin && echo $$ >child.pid &&
	LD_PRELOAD='"$B"'/libmemtrace.so exec "$0" 0' "$CLIENTS/rt-rob-execloop" >out 2>err || fail "exit status as a child"
cpid=$(cat child.pid)
expect_eq "$(cat victim)" "precious" "symlink target after a child run"
[ -L "child.$cpid.bin" ] || fail "the planted child name was replaced"
expect_eq "$(ls | grep -E '^child\.' | tr '\n' ' ')" "child.$cpid.1.bin child.$cpid.bin child.pid " "child traces"
expect_eq "$(stat -c %a "child.$cpid.1.bin")" 600 "mode of the child trace"
exit 0
