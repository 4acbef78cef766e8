#!/bin/sh
# Golden reports: traces recorded on the simulator and checked in
# (tests/data/report-*.bin.gz: rt-rep-peak and rt-rep-pool, recorded with
# MEMTRACE_DEPTH=0 so that no symbol depends on this build) must give the
# text and JSON reports checked in beside them, line for line, once pids,
# times and addresses are masked (tests/data/mask-report.sh). To regenerate
# after an intended change, for N in peak pool:
#   gzip -dc tests/data/report-N.bin.gz >/tmp/report-N.bin
#   build/memtrace report --no-db /tmp/report-N.bin | tests/data/mask-report.sh >tests/data/report-N.txt
#   build/memtrace report --no-db --json /tmp/report-N.bin | tests/data/mask-report.sh >tests/data/report-N.json
. "$(dirname "$0")/lib.sh"

cd "$T" || exit 1
for n in peak pool; do
	gzip -dc "$ROOT/tests/data/report-$n.bin.gz" >"report-$n.bin" || fail "cannot unpack report-$n.bin.gz"
	"$MEMTRACE" report --no-db "report-$n.bin" >out 2>err || fail "report of report-$n.bin exited $?: $(cat err)"
	"$ROOT/tests/data/mask-report.sh" <out >masked
	diff -u "$ROOT/tests/data/report-$n.txt" masked || fail "text report of report-$n.bin differs"
	"$MEMTRACE" report --no-db --json "report-$n.bin" >out 2>err || fail "report --json of report-$n.bin exited $?"
	"$ROOT/tests/data/mask-report.sh" <out >masked
	diff -u "$ROOT/tests/data/report-$n.json" masked || fail "JSON report of report-$n.bin differs"
done
exit 0
