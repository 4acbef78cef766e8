#!/bin/sh
# Two processes at once on one device (rt-rep-multi): each has its own
# section and peak (10 and 20 MiB); the device's total over both, aligned on
# wall-clock time, peaks at 30 MiB while both hold their buffers.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-rep-multi" >"$T/out" 2>"$T/err" || fail "rt-rep-multi failed: $(cat "$T/err")"
set -- "$T"/trace*.bin
[ $# = 2 ] || fail "expected two traces, got: $*"
"$MEMTRACE" report --json "$@" >"$T/json" || fail "report failed"
expect_eq "$(grep -c '"ppid": ' "$T/json")" 2 "processes"
sed -n '/^  "devices"/,/^  \]/p' "$T/json" >"$T/dev"
expect_eq "$(grep -m1 '"peak_reserved_bytes"' "$T/dev" | sed 's/.*: //; s/,//')" 31457280 "device peak over both processes"
sed -n '/^  "processes"/,/^  \]/p' "$T/json" >"$T/procs"
expect_eq "$(grep '^      "peak_reserved_bytes"' "$T/procs" | sed 's/.*: //; s/,//' | sort -n | tr '\n' ' ')" \
	"10485760 20971520 " "each process's peak"
expect_eq "$(sed -n '/^  "peak_sites"/,/^  \]/p' "$T/json" | grep '"bytes"' | sed 's/.*: //; s/,//' | tr '\n' ' ')" \
	"20971520 10485760 " "sites at the device's peak, from both processes"
"$MEMTRACE" report "$@" >"$T/text" || fail "report failed"
grep -q '^memtrace report: 2 processes' "$T/text" || fail "summary: $(head -1 "$T/text")"
expect_eq "$(grep -c '^process [0-9]*: peak' "$T/text")" 2 "a section per process"
grep -q '^device 0: peak 30.0 MiB reserved' "$T/text" || fail "no total device peak"
# the database holds both
expect_eq "$(sqlite3 "$1.db" 'SELECT count(DISTINCT pid) FROM ev')" 2 "pids in the database"
exit 0
