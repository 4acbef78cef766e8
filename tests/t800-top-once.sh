#!/bin/sh
# `memtrace top --once` on a job while it runs (rt-top-phases, stepped
# through its phases with fifos): at each moment the frame's figures are
# those `memtrace report` gives for the records written so far (the same
# traces, read right after; tests/top-vs-report.py), and the values
# computed by hand: workers appear when forked, a killed worker stays with
# its last state, a process over gives its memory back to the device.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
MiB=1048576

frame() { # N: top's frame and the report of the same traces
	"$MEMTRACE" top --once --bytes --sites -1 trace.bin >top$1 2>err || fail "top $1: $(cat err)"
	"$MEMTRACE" report --no-db --json trace*.bin >rep$1.json 2>err || fail "report $1: $(cat err)"
	python3 "$ROOT/tests/top-vs-report.py" top$1 rep$1.json ${2:-} >diff$1 ||
		fail "frame $1 differs from the report: $(cat diff$1)"
}
dev() { awk '$1 == "HOST" { on = 1; next } on && NF == 0 { exit } on { print $2, $3, $4, $5, $8, $9 }' "$1"; }
procs() { awk '$1 == "PID" { on = 1; next } on && NF == 0 { exit } on { print $3, $5, $8, $9, $10, $13 }' "$1"; }
sites() { awk '$1 == "DEV" && $2 == "LIVE" { on = 1; next } on { print $1, $2, $3, $6 }' "$1"; }

top_start
top_wait 1
frame 1 single
expect_eq "$(dev top1)" "0 $((16 * MiB)) $((16 * MiB)) 0 $((16 * MiB)) 0" "phase 1: device"
expect_eq "$(procs top1)" "running $((16 * MiB)) $((16 * MiB)) 2 0 $((4 * MiB))" "phase 1: process"
expect_eq "$(sites top1)" "0 $((16 * MiB)) 1 main
host $((4 * MiB)) 1 main" "phase 1: sites"
expect_eq "$(grep '^shm: ' top1 | cut -d';' -f1)" "shm: run $MiB in 1 segment, peak $MiB" "phase 1: shm"

top_go
top_wait 2
frame 2
# the workers in pid order after the parent; the device holds all three
expect_eq "$(dev top2)" "0 $((35 * MiB)) $((35 * MiB)) 0 $((35 * MiB)) 1" "phase 2: device"
expect_eq "$(procs top2)" "running $((17 * MiB)) $((17 * MiB)) 3 1 $((4 * MiB))
running $((8 * MiB)) $((8 * MiB)) 1 0 0
running $((10 * MiB)) $((10 * MiB)) 2 0 0" "phase 2: processes"
# the report's sites: the workers' line is one site per caller (main:91,
# main:92), as the report tells them apart
expect_eq "$(sites top2 | head -3)" "0 $((16 * MiB)) 1 main
0 $((8 * MiB)) 1 worker
0 $((8 * MiB)) 1 worker" "phase 2: top sites (the report's)"

top_go
top_wait 3
frame 3
# the killed worker keeps its last state; its 10 MiB left the device
expect_eq "$(dev top3)" "0 $((12 * MiB)) $((12 * MiB)) 0 $((35 * MiB)) 1" "phase 3: device"
expect_eq "$(procs top3)" "running $((4 * MiB)) $((17 * MiB)) 3 1 $((4 * MiB))
running $((8 * MiB)) $((8 * MiB)) 1 0 0
killed $((10 * MiB)) $((10 * MiB)) 2 0 0" "phase 3: processes"

top_end
frame 4
expect_eq "$(dev top4)" "0 0 0 0 $((35 * MiB)) 1" "the end: device"
expect_eq "$(procs top4)" "exited 0 $((17 * MiB)) 0 1 0
exited $((8 * MiB)) $((8 * MiB)) 1 0 0
killed $((10 * MiB)) $((10 * MiB)) 2 0 0" "the end: processes"
expect_eq "$(grep '^memtrace top: ' top4 | cut -d, -f1)" "memtrace top: 3 processes (0 running)" "the end: header"
exit 0
