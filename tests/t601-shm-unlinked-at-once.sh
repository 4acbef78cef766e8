#!/bin/sh
# The file_descriptor strategy (PyTorch's default): four 1 MiB segments,
# each unlinked right after it is made and held by its descriptor and
# mapping: 4 created, all unlinked at once, none left, peak 4 MiB. Failed
# calls are recorded with their errno; posix_fallocate is a fallocate.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-shm-fd" >"$T/out" 2>"$T/err" || fail "rt-shm-fd failed: $(cat "$T/err")"
pid=$(sed -n 's/^pid //p' "$T/out")
ls /dev/shm | grep -q "^mt_shm_${pid}_" && { rm -f /dev/shm/mt_shm_"$pid"_*; fail "segments left in /dev/shm"; }
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump"
expect_eq "$(count '^shm .* op=open fd=[0-9]+ flags=0xc2 name="/mt_shm_'"$pid"'_fd[0-3]" .* err=0 ' "$T/dump")" 4 "opens"
expect_eq "$(count '^shm .* op=open fd=-1 flags=0xc2 name="/mt_shm_'"$pid"'_fd0" .* err=17 ' "$T/dump")" 1 "failed open (EEXIST)"
expect_eq "$(count '^shm .* op=unlink fd=-1 .* err=0 ' "$T/dump")" 4 "unlinks"
expect_eq "$(count '^shm .* op=unlink fd=-1 flags=0x0 name="/mt_shm_'"$pid"'_fd3" size=0 addr=0x0 err=2 ' "$T/dump")" 1 "failed unlink (ENOENT)"
expect_eq "$(count '^shm .* op=truncate .* size=1048576 .* err=0 ' "$T/dump")" 3 "ftruncates"
expect_eq "$(count '^shm .* op=fallocate .* name="/mt_shm_'"$pid"'_fd3" size=1048576 .* err=0 ' "$T/dump")" 1 "posix_fallocate"
expect_eq "$(count '^shm .* op=mmap .* size=1048576 addr=0x[1-9a-f]' "$T/dump")" 4 "mmaps"
expect_eq "$(count '^shm .* op=munmap .* size=1048576 ' "$T/dump")" 4 "munmaps"
expect_eq "$(count '^shm .* op=close fd=[0-9]+ .* err=0 ' "$T/dump")" 4 "closes"
# every unlink comes before its segment's close (the strategy's signature)
awk '$1 == "shm" { split($4, o, "="); split($7, n, "="); if (o[2] == "unlink") u[n[2]] = 1;
	if (o[2] == "close" && !u[n[2]]) bad = 1 } END { exit bad }' "$T/dump" || fail "a close before its unlink"

"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report --json"
grep -q '^  "shm": {"created":4,"named":0,"unlinked_at_once":4,"attached":0,"peak_bytes":4194304,"peak_time_ns":[0-9]*,"present_at_exit":0,"present_bytes":0,"records":26,"failed":{"open":1,"truncate":0,"mmap":0,"unlink":1,' "$T/json" ||
	fail "analysis figures: $(cat "$T/json")"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "report"
grep -q '^  still present at exit: 0 segments, 0 B$' "$T/text" || fail "text present: $(cat "$T/text")"
grep -q '^  failed calls: 2 (1 open, 1 unlink)$' "$T/text" || fail "text failed calls: $(cat "$T/text")"
