#!/bin/sh
# t203-run-summary: what `memtrace run` says on stderr once the command has
# exited: per device the peak reserved, what was live at exit and the failed
# allocations, then the traces and the command to report on them; the
# figures are those of samples/README.md (leak: a 112 MiB peak, 20 MiB live
# at exit; fragmentation on 400 MiB: a 100 MiB peak, 2 failed cudaMalloc;
# multiprocess: 48 MiB on device 0, 80 MiB on device 1). The summary never
# changes the exit status nor stdout; --no-summary lists the traces instead.
. "$(dirname "$0")/lib.sh"
for s in leak fragmentation multiprocess; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
cd "$T" || exit 1

# mt ARGS...: memtrace on the simulated CUDA, stdout in $T/out, stderr in $T/err, status in $rc.
mt() { sim "$MEMTRACE" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect() { # RC STDERR WHAT
	expect_eq "$rc" "$1" "$3: exit status"
	expect_eq "$(cat "$T/err")" "$2" "$3: stderr"
}

sim "$SAMPLES/leak" >plain.out 2>plain.err || fail "leak failed on its own: $(cat plain.err)"
mt run -o leak.bin "$SAMPLES/leak"
expect 0 "memtrace: device 0: peak 112 MiB, live at exit 20.0 MiB, 0 failed allocations
memtrace: wrote leak.bin (1 process); next: memtrace report leak.bin" "leak"
cmp -s plain.out "$T/out" || fail "leak: stdout differs under memtrace run"

# the command's status, whatever the summary (the sample is the shell's
# child, so its trace is STEM.PID.bin)
mt run -o exit5.bin -- sh -c '"$1"; exit 5' sh "$SAMPLES/leak"
p=$(ls | sed -n 's/^exit5\.\([0-9]*\)\.bin$/\1/p')
expect 5 "memtrace: device 0: peak 112 MiB, live at exit 20.0 MiB, 0 failed allocations
memtrace: wrote exit5.$p.bin (1 process); next: memtrace report exit5.$p.bin" "leak, exit 5"

mt run --no-summary -o leak.bin "$SAMPLES/leak"
pid=$("$MEMTRACE" dump leak.bin | sed -n '1s/.* pid \([0-9]*\),.*/\1/p')
expect 0 "memtrace: wrote leak.bin (pid $pid, 72 events)" "leak --no-summary"

SIMCUDA_MEM=400M mt run -o frag.bin "$SAMPLES/fragmentation"
expect 0 "memtrace: device 0: peak 100 MiB, live at exit 0 B, 2 failed allocations
memtrace: wrote frag.bin (1 process); next: memtrace report frag.bin" "fragmentation"

mkdir "a b"
SIMCUDA_DEVICES=2 mt run -o "a b/it's.bin" "$SAMPLES/multiprocess"
set -- $(ls "a b" | sed -n 's/^it.s\.\([0-9]*\)\.bin$/\1/p' | sort -n)
[ $# = 2 ] || fail "multiprocess: $# worker traces, expected 2"
expect 0 "memtrace: device 0: peak 48.0 MiB, live at exit 0 B, 0 failed allocations
memtrace: device 1: peak 80.0 MiB, live at exit 0 B, 0 failed allocations
memtrace: wrote 2 traces (2 processes); next: memtrace report 'a b/it'\\''s.$1.bin' 'a b/it'\\''s.$2.bin'" \
	"multiprocess"
# the next command, as printed, works
next=$(sed -n 's/.*; next: //p' "$T/err")
eval "set -- $next"
[ "$1 $2" = "memtrace report" ] || fail "next command '$next'"
shift 2
"$MEMTRACE" report --no-db "$@" >report.txt 2>report.err || fail "the next command failed: $(cat report.err)"
expect_eq "$(grep -c '^device [01]: peak' report.txt)" 2 "the next command's report"
exit 0
