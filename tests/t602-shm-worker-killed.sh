#!/bin/sh
# A forked DataLoader-style worker makes two named segments and is SIGKILLed
# before it unlinks them: its trace holds them under its own pid (and its
# close of the descriptor it inherited, named); the parent's holds its own
# segment only; merged: 3 created, 2 left (1 + 2 MiB), both the worker's.
. "$(dirname "$0")/lib.sh"

mode=${SHM_WORKER_MODE:-fork}
traced "$CLIENTS/rt-shm-worker" "$mode" >"$T/out" 2>"$T/err" || fail "rt-shm-worker $mode failed: $(cat "$T/err")"
set -- $(cat "$T/out")
ppid=$2 wpid=$4
[ -n "$wpid" ] || fail "client output: $(cat "$T/out")"
left=$(ls /dev/shm | grep -c "^mt_shm_${wpid}_w[01]$")
rm -f /dev/shm/mt_shm_"$wpid"_* /dev/shm/mt_shm_"$ppid"_*
expect_eq "$left" 2 "segments the killed worker left in /dev/shm"
[ -f "$T/trace.$wpid.bin" ] || fail "no worker trace: $(ls "$T")"
"$MEMTRACE" dump "$T/trace.$wpid.bin" >"$T/worker" || fail "worker dump"
"$MEMTRACE" dump "$T/trace.bin" >"$T/parent" || fail "parent dump"
grep -q "^process pid=$wpid ppid=$ppid " "$T/worker" || fail "worker process record"
expect_eq "$(count '^shm .* tid='"$wpid"' op=open fd=[0-9]+ flags=0xc2 name="/mt_shm_'"$wpid"'_w[01]" .* err=0 ' "$T/worker")" 2 "worker opens"
expect_eq "$(awk '$1 == "shm" && $4 == "op=truncate" { print $7, $8 }' "$T/worker")" \
	"$(printf 'name="/mt_shm_%s_w0" size=1048576\nname="/mt_shm_%s_w1" size=2097152' "$wpid" "$wpid")" "worker sizes"
expect_eq "$(count '^shm .* op=unlink ' "$T/worker")" 0 "worker unlinks"
expect_eq "$(count '^shm .* op=mmap ' "$T/worker")" 2 "worker mmaps"
if [ "$mode" = fork ]; then
	expect_eq "$(count '^shm .* op=close fd=3 flags=0x0 name="/mt_shm_'"$ppid"'_p" ' "$T/worker")" 1 "inherited descriptor closed in the worker"
else
	expect_eq "$(count "_p\"" "$T/worker")" 0 "the parent's segment in the exec'd worker (close-on-exec)"
	grep -q 'cmdline="rt-shm-worker" "child"' "$T/worker" || fail "exec'd image's command line"
fi
expect_eq "$(count '^shm ' "$T/parent")" 4 "parent records"
expect_eq "$(count "_w[01]\"" "$T/parent")" 0 "worker segments in the parent trace"
expect_eq "$(count '^shm .* op=unlink fd=-1 flags=0x0 name="/mt_shm_'"$ppid"'_p" .* err=0 ' "$T/parent")" 1 "parent unlink"

"$MEMTRACE" report --no-db --json "$T/trace.bin" "$T/trace.$wpid.bin" >"$T/json" || fail "report --json"
grep -q '^  "shm": {"created":3,"named":3,"unlinked_at_once":0,"attached":0,"peak_bytes":4194304,"peak_time_ns":[0-9]*,"present_at_exit":2,"present_bytes":3145728,' "$T/json" ||
	fail "merged figures: $(cat "$T/json")"
grep -q '"segments_present":\[{"name":"/mt_shm_'"$wpid"'_w1","pid":'"$wpid"',"size":2097152,"stack":[1-9][0-9]*,"created_ns":[0-9]*},{"name":"/mt_shm_'"$wpid"'_w0","pid":'"$wpid"',"size":1048576,' "$T/json" ||
	fail "segments present: $(cat "$T/json")"
grep -q '{"pid":'"$wpid"',"created":2,"named":2,"unlinked_at_once":0,"attached":0,"peak_bytes":3145728,"peak_time_ns":[0-9]*,"present_at_exit":2,"present_bytes":3145728}' "$T/json" ||
	fail "worker figures: $(cat "$T/json")"
grep -q '{"pid":'"$ppid"',"created":1,"named":1,"unlinked_at_once":0,"attached":0,"peak_bytes":1048576,"peak_time_ns":[0-9]*,"present_at_exit":0,"present_bytes":0}' "$T/json" ||
	fail "parent figures: $(cat "$T/json")"
"$MEMTRACE" report --no-db "$T/trace.bin" "$T/trace.$wpid.bin" >"$T/text" || fail "report"
grep -q "^    pid $wpid: 2 created (2 named, 0 unlinked at once), peak 3.0 MiB, 2 present at exit (3.0 MiB)$" "$T/text" ||
	fail "text section: $(cat "$T/text")"
