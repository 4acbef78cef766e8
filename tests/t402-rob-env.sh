#!/bin/sh
# Programs that pull the environment or the descriptors from under the
# tracer:
#   - clearenv() before allocating: traced as usual (the library read its
#     MEMTRACE_* variables when it was loaded);
#   - clearenv() before exec: the new image has no LD_PRELOAD, so it is not
#     traced; it runs normally, and the first image's trace is complete;
#   - unsetenv("LD_PRELOAD") before fork + exec: the child is not traced
#     (memtrace follows processes only through LD_PRELOAD) and runs
#     normally; the parent's trace is complete, no other trace appears;
#   - closing every descriptor, 0..2 included, and reopening 0, 1 and 2 on
#     a file: every event traced, nothing of memtrace in the program's file.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
# addresses masked: rt-basic's are checked by t100
mask() { sed -E 's/0x[0-9a-f]*[1-9a-f][0-9a-f]*/A/g'; }

# clearenv, then allocate
traced "$CLIENTS/rt-rob-env" clearenv >out 2>err || fail "clearenv: exit $?: $(cat err)"
expect_eq "$(cat out)" "cleared" "clearenv: output"
expect_eq "$(sed 's/pid [0-9]*/pid P/' err)" "memtrace: wrote $T/trace.bin (pid P, 4 events)" "clearenv: stderr"
# (the simulator's log went with the environment: the simulator is
# deterministic, both blocks get its first address)
expect_eq "$(dump_events trace.bin)" "alloc device 0 0x500000000000 262144 0
alloc device 0 0x500000000000 524288 0
free 0x500000000000 0
free 0x500000000000 0" "clearenv: events"
rm -f trace*.bin calls.log

# clearenv, then exec: the second image runs untraced
traced "$CLIENTS/rt-rob-env" clearenv-exec >out 2>err || fail "clearenv-exec: exit $?: $(cat err)"
expect_eq "$(tail -n 1 out)" "done" "clearenv-exec: rt-basic's output"
expect_eq "$(ls | grep -c '^trace.*\.bin$')" 1 "clearenv-exec: traces"
expect_eq "$(dump_events trace.bin | mask)" "alloc device 0 A 1048576 0
free A 0" "clearenv-exec: events of the first image only"
expect_eq "$(grep -c '^oom=2$' out)" 1 "clearenv-exec: rt-basic allocated"
rm -f trace*.bin calls.log

# unsetenv("LD_PRELOAD"), then fork + exec: the child is not traced
traced "$CLIENTS/rt-rob-env" unset-preload >out 2>err || fail "unset-preload: exit $?: $(cat err)"
expect_eq "$(tail -n 1 out)" "child status 0" "unset-preload: output"
expect_eq "$(grep -c '^done$' out)" 1 "unset-preload: the child ran"
expect_eq "$(ls | grep -c '^trace.*\.bin$')" 1 "unset-preload: traces"
expect_eq "$(grep -c '^memtrace: wrote ' err)" 1 "unset-preload: traces listed"
ppid=$("$MEMTRACE" dump trace.bin | awk '$1 == "process" { split($2, kv, "="); print kv[2] }')
same_events trace.bin calls.log "$ppid"
expect_eq "$(mask <events.trace)" "alloc device 0 A 1048576 0
free A 0" "unset-preload: parent events"
expect_eq "$(awk '$1 == "alloc" || $1 == "free"' calls.log | grep -vc " pid=$ppid\$")" 8 "unset-preload: the child's calls reached the driver"
rm -f trace*.bin calls.log

# every descriptor closed, 0..2 reopened on a file of the program's
SIMCUDA_LOG=/dev/null traced "$CLIENTS/rt-rob-env" closeall "$T/prog.out" 5000 >out 2>err ||
	fail "closeall: exit $?: $(cat err)"
expect_eq "$(cat prog.out)" "5000 pairs" "closeall: the program's file"
dump_events trace.bin >events
expect_eq "$(grep -c '^alloc device 0 0x[0-9a-f]* 4096 0$' events)" 5000 "closeall: allocations after the close"
expect_eq "$(grep -c '^alloc device 0 0x[0-9a-f]* 2097152 0$' events)" 1 "closeall: allocation before the close"
expect_eq "$(grep -c '^free 0x[0-9a-f]* 0$' events)" 5001 "closeall: frees"
exit 0
