#!/bin/sh
# `memtrace top` following a busy job to its end: 4 processes of
# bench/top-rate making 200 000 events a second for 2 s (many slabs, each
# copied while its thread writes it). top without a terminal prints a
# frame every 0.2 s and ends with the job; its last frame has every record
# and the same figures as `top --once` read afterwards. Then `memtrace run
# --top` without a terminal: frames on stdout, the command's output in
# STEM.out, the traces as `memtrace run` writes them.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
[ -x "$B/bench/top-rate" ] || fail "no $B/bench/top-rate (make tests-build)"

mkdir run
"$MEMTRACE" top --interval 0.2 --bytes --dir run >frames 2>top.err &
TOP=$!
LD_LIBRARY_PATH=$SIM MEMTRACE_DEPTH=0 "$MEMTRACE" run --no-summary -o run/t.bin -- \
	"$B/bench/top-rate" 4 200000 2 >counts 2>err || fail "top-rate: $(cat err)"
i=0
while kill -0 $TOP 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $TOP 2>/dev/null && { kill $TOP; fail "top did not end with the job"; }
wait $TOP || fail "top failed: $(cat top.err)"
"$MEMTRACE" top --once --bytes --dir run >once 2>err || fail "top --once: $(cat err)"
# the tables of the last frame, without the header, host and RSS lines
last() { awk '/^memtrace top:/ { n = NR } { l[NR] = $0 } END { for (i = n + 3; i <= NR; i++) if (l[i] != "") print l[i] }' "$1"; }
last frames >live.tables
last once >once.tables
[ -s once.tables ] || fail "no frame from top --once"
cmp -s live.tables once.tables || fail "the live frame differs from --once: $(diff live.tables once.tables | head -5)"
expect_eq "$(grep '^memtrace top:' frames | tail -1 | cut -d, -f2)" "$(grep '^memtrace top:' once | cut -d, -f2)" \
	"records fed live and at once"
events=$(awk '{ s += $1 } END { print s }' counts)
expect_eq "$(awk '$1 == "PID" { on = 1; next } on && NF == 0 { exit } on { s += $9 } END { print s }' once)" \
	$((4 * 64)) "live allocations: 64 kept by each process"
[ "$events" -ge 380000 ] || fail "top-rate made $events events, about 400000 expected"
"$MEMTRACE" report --no-db --json run/*.bin >rep.json 2>err || fail "report: $(cat err)"
expect_eq "$(python3 -c 'import json; print(sum(p["events"] for p in json.load(open("rep.json"))["processes"]))')" \
	"$events" "events in the traces"

# memtrace run --top, stdout not a terminal
mkdir b
sim "$MEMTRACE" run --top --metrics-interval 0.2 --no-summary -o b/t.bin -- \
	sh -c "echo hello-from-cmd; exec '$CLIENTS/rt-basic'" >b.stdout 2>b.stderr ||
	fail "run --top: $(cat b.stderr)"
expect_eq "$(cat b/t.out)" "hello-from-cmd
$(sim "$CLIENTS/rt-basic")" "the command's output in STEM.out"
grep -q "the output of 'sh' goes to b/t.out" b.stderr || fail "run --top does not say where the output went: $(cat b.stderr)"
expect_eq "$(grep '^memtrace top:' b.stdout | tail -1 | cut -d'(' -f2 | cut -d')' -f1)" "0 running" "run --top: the last frame"
expect_eq "$(grep -A1 '^ *PID' b.stdout | tail -1 | awk '{ print $3, $11, $12 }')" "exited 65.0 MiB" \
	"run --top: the process's peak (1 MiB + 3000 B + 64 MiB) in the last frame"
expect_eq "$(ls b)" "t.bin
t.out" "run --top: the files written"
"$MEMTRACE" report --no-db b/t.bin >/dev/null 2>err || fail "report of run --top's trace: $(cat err)"
exit 0
