#!/bin/sh
# Named segments (torch.multiprocessing's file_system strategy): every
# shm_open, ftruncate, mmap, munmap, close and shm_unlink is recorded with
# the segment name, size, descriptor and a stack; the analysis counts 3
# created, all named, 2 left in /dev/shm (2 + 3 MiB), peak 6 MiB: in the
# report's "shm" object and its text section.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/rt-shm-named" >"$T/out" 2>"$T/err" || fail "rt-shm-named failed: $(cat "$T/err")"
pid=$(sed -n 's/^pid //p' "$T/out")
rm -f /dev/shm/mt_shm_"$pid"_*
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump"
# op fd flags name size err, addresses and times left out
awk '$1 == "shm" { delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	print f["op"], f["fd"], f["flags"], f["name"], f["size"], f["err"], (f["addr"] != "0x0"), (f["stack"] > 0) }' \
	"$T/dump" >"$T/ops"
n=\"/mt_shm_$pid
cat >"$T/want" <<EOT
open 3 0xc2 ${n}_0" 0 0 0 1
truncate 3 0x0 ${n}_0" 1048576 0 0 1
mmap 3 0x3 ${n}_0" 1048576 0 1 1
munmap -1 0x0 ${n}_0" 1048576 0 1 1
close 3 0x0 ${n}_0" 0 0 0 1
open 3 0xc2 ${n}_1" 0 0 0 1
truncate 3 0x0 ${n}_1" 2097152 0 0 1
mmap 3 0x3 ${n}_1" 2097152 0 1 1
munmap -1 0x0 ${n}_1" 2097152 0 1 1
close 3 0x0 ${n}_1" 0 0 0 1
open 3 0xc2 ${n}_2" 0 0 0 1
truncate 3 0x0 ${n}_2" 3145728 0 0 1
mmap 3 0x3 ${n}_2" 3145728 0 1 1
munmap -1 0x0 ${n}_2" 3145728 0 1 1
close 3 0x0 ${n}_2" 0 0 0 1
unlink -1 0x0 ${n}_0" 0 0 0 1
open 3 0x2 ${n}_1" 0 0 0 1
close 3 0x0 ${n}_1" 0 0 0 1
EOT
diff -u "$T/want" "$T/ops" >"$T/diff" || fail "shm records differ: $(cat "$T/diff")"
# the mmap and munmap of one segment name the same address
expect_eq "$(awk '$1 == "shm" && ($4 == "op=mmap" || $4 == "op=munmap") { split($9, kv, "="); print kv[2] }' "$T/dump" | uniq -c | awk '{ print $1 }' | sort -u)" 2 "mmap/munmap address pairs"
expect_eq "$(grep -c '^shm .* tid='"$pid"' ' "$T/dump")" 18 "records of the main thread"

"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report --json"
grep -q '^  "shm": {"created":3,"named":3,"unlinked_at_once":0,"attached":0,"peak_bytes":6291456,"peak_time_ns":[0-9]*,"present_at_exit":2,"present_bytes":5242880,"records":18,' "$T/json" ||
	fail "analysis figures: $(cat "$T/json")"
grep -q '"segments_present":\[{"name":"/mt_shm_'"$pid"'_2","pid":'"$pid"',"size":3145728,"stack":[1-9][0-9]*,"created_ns":[0-9]*},{"name":"/mt_shm_'"$pid"'_1","pid":'"$pid"',"size":2097152,' "$T/json" ||
	fail "segments present: $(cat "$T/json")"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "report"
sed -n '/^POSIX shared memory/,/^$/p' "$T/text" >"$T/section"
cat >"$T/want" <<EOT
POSIX shared memory (/dev/shm)
  segments created: 3 (3 named, 0 unlinked at once)
EOT
expect_eq "$(head -n 2 "$T/section")" "$(cat "$T/want")" "text counts"
grep -q '^  peak total size: 6.0 MiB at ' "$T/section" || fail "text peak: $(cat "$T/section")"
grep -q '^  still present at exit: 2 segments, 5.0 MiB$' "$T/section" || fail "text present: $(cat "$T/section")"
grep -A1 "^    /mt_shm_${pid}_2  3.0 MiB  pid $pid  created at " "$T/section" | grep -q '^      at .*(rt-shm-named.c:[0-9]*)' ||
	fail "text leftover and its creating stack: $(cat "$T/section")"
