#!/bin/sh
# samples/shm-leak.c: the figures its comment and samples/README.md
# promise, in the report (text and JSON) of the merged traces of its trainer
# and 2 workers; and it leaves /dev/shm clean.
. "$(dirname "$0")/lib.sh"

traced "$SAMPLES/shm-leak" >"$T/out" 2>"$T/err" || fail "shm-leak failed: $(cat "$T/err")"
set -- $(head -n 1 "$T/out")
trainer=$2 left1=${6#/} left2=${7#/}
[ -e "/dev/shm/$left1" ] || [ -e "/dev/shm/$left2" ] && { rm -f "/dev/shm/$left1" "/dev/shm/$left2"; fail "the sample left /dev/shm dirty"; }
w1=$(echo "$left1" | cut -d_ -f3) w2=$(echo "$left2" | cut -d_ -f3)
for p in "$trainer" "$w1" "$w2"; do
	[ -f "$T/trace.$p.bin" ] || fail "no trace for pid $p: $(ls "$T")"
done
"$MEMTRACE" report "$T"/trace*.bin >"$T/report" || fail "report"
sed -n '/^POSIX shared memory/,/^$/p' "$T/report" >"$T/text"
cat >"$T/want" <<EOT
POSIX shared memory (/dev/shm)
  segments created: 8 (6 named, 2 unlinked at once)
EOT
expect_eq "$(head -n 2 "$T/text")" "$(cat "$T/want")" "counts"
grep -q '^  peak total size: 26.0 MiB at ' "$T/text" || fail "peak: $(cat "$T/text")"
grep -q '^  still present at exit: 2 segments, 8.0 MiB$' "$T/text" || fail "present: $(cat "$T/text")"
for w in "$w1" "$w2"; do
	grep -q "^    /memtrace_sample_${w}_2  4.0 MiB  pid $w  created at " "$T/text" || fail "leftover of $w: $(cat "$T/text")"
	grep -q "^    pid $w: 4 created (3 named, 1 unlinked at once), peak 13.0 MiB, 1 present at exit (4.0 MiB)$" "$T/text" ||
		fail "worker $w: $(cat "$T/text")"
	# the creating stack, symbolized: make_batch() in the worker
	grep -A1 "^    /memtrace_sample_${w}_2 " "$T/text" | grep -q '^      at make_batch (shm-leak.c:[0-9]*) < ' ||
		fail "leftover's creating stack is not make_batch(): $(cat "$T/text")"
done
# the same in JSON (this time from the database the text report made); the
# stack of a leftover is its open's, in the worker's trace
"$MEMTRACE" report --json "$T"/trace*.bin >"$T/json" || fail "report --json"
grep -q '^  "shm": {"created":8,"named":6,"unlinked_at_once":2,"attached":0,"peak_bytes":27262976,"peak_time_ns":[0-9]*,"present_at_exit":2,"present_bytes":8388608,' "$T/json" ||
	fail "JSON figures: $(grep '"shm"' "$T/json")"
"$MEMTRACE" dump "$T/trace.$w1.bin" >"$T/dump"
stack=$(awk '$1 == "shm" && $4 == "op=open" && $7 == "name=\"/memtrace_sample_'"$w1"'_2\"" { split($11, kv, "="); print kv[2] }' "$T/dump")
[ -n "$stack" ] && [ "$stack" -gt 0 ] || fail "creating stack of the leftover"
grep -q '"segments_present":\[.*{"name":"/memtrace_sample_'"$w1"'_2","pid":'"$w1"',"size":4194304,"stack":'"$stack"',' "$T/json" ||
	fail "leftover's stack is not its open's ($stack): $(grep '"shm"' "$T/json")"
