#!/bin/sh
# A device shared by 64 forked workers (rt-rep-workers: batches of 7, each
# worker leaves 3 MiB at its exit): the device's peak is 21 MiB, what the
# workers left at their exits sums to 192 MiB, and at the end of the run
# only the last worker's 3 MiB is live. The report says which figure is
# which (it printed "peak 21 MiB" beside "live at exit 192 MiB").
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
MiB=1048576

sim "$MEMTRACE" run --no-summary -o w.bin -- "$CLIENTS/rt-rep-workers" >out 2>err ||
	fail "rt-rep-workers failed: $(cat err)"
expect_eq "$(ls w.*.bin | wc -l)" 64 "worker traces (the parent allocates nothing)"
"$MEMTRACE" report --no-db w.*.bin >text 2>err || fail "report failed: $(cat err)"
"$MEMTRACE" report --no-db --json w.*.bin >json 2>err || fail "report --json failed: $(cat err)"
expect_eq "$(grep -m1 '^device 0:' text)" "device 0: peak 21.0 MiB reserved at $(grep -m1 '^device 0:' text | sed 's/.* at //')" \
	"the device's peak"
expect_eq "$(grep -m1 'at exit' text)" \
	"  left at exit 192 MiB (by 64 processes, each at its own exit), live at the end of the run 3.00 MiB" \
	"the device's exit figures"
rj() { python3 -c "import json,sys; r=json.load(open('json')); d=[d for d in r['devices'] if d['device'] == 0]; print($1)"; }
expect_eq "$(rj '"%d %d %d" % (d[0]["peak_reserved_bytes"], d[0]["left_at_exit_bytes"], d[0]["live_at_end_bytes"])')" \
	"$((21 * MiB)) $((192 * MiB)) $((3 * MiB))" "JSON: peak, left at exit, live at the end"
# one worker's own device: one figure, live at exit; 64 processes make a
# ranks table, with full sections for the 3 highest peaks only (all equal
# here: no outlier flagged), and the JSON has every worker's
expect_eq "$(grep -c '^    live at exit 3.00 MiB$' text)" 3 "full sections' live at exit"
expect_eq "$(grep -c '^  vm  *0  *-  *[0-9]*  *3.00 MiB  *0$' text)" 64 "a row per worker, none flagged"
expect_eq "$(python3 -c "import json; r=json.load(open('json')); print(sum(1 for p in r['processes'] for d in p['devices'] if d['left_at_exit_bytes'] == 3 * $MiB))")" \
	64 "JSON: each worker's live at exit"
exit 0
