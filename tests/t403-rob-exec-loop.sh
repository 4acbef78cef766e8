#!/bin/sh
# A program that execs itself 5 times, allocating in each image: 6 images
# of one pid, 6 traces (trace.bin, then trace.PID.bin, trace.PID.1.bin ..
# trace.PID.4.bin: a name is never reused), each valid and holding exactly
# its own image's events; `memtrace run` lists all 6.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
N=5

timeout 60 sh -c 'LD_LIBRARY_PATH='"$SIM"' SIMCUDA_LOG=calls.log \
	'"$MEMTRACE"' run --no-summary -o trace.bin -- '"$CLIENTS"'/rt-rob-execloop '$N >out 2>err ||
	fail "exec loop failed or hung: $(cat err)"
expect_eq "$(cat out)" "done" "client output"
pid=$("$MEMTRACE" dump trace.bin | awk '$1 == "process" { split($2, kv, "="); print kv[2] }')
[ -n "$pid" ] || fail "no process record in trace.bin"
expect_eq "$(ls | grep '\.bin$' | sort | tr '\n' ' ')" \
	"trace.$pid.1.bin trace.$pid.2.bin trace.$pid.3.bin trace.$pid.4.bin trace.$pid.bin trace.bin " "trace files"
expect_eq "$(grep -c "^memtrace: wrote trace.*bin (pid $pid, 3 events)\$" err)" 6 "traces listed"
expect_eq "$(grep -c . err)" 6 "stderr lines"

# image k (N = k) allocated (k+1) MiB and (k+1) * 4 KiB: the first image
# writes trace.bin, the next trace.PID.bin, then trace.PID.1.bin, ...
k=$N
for f in trace.bin trace.$pid.bin trace.$pid.1.bin trace.$pid.2.bin trace.$pid.3.bin trace.$pid.4.bin; do
	"$MEMTRACE" dump "$f" >dump 2>dump.err || fail "$f does not load: $(cat dump.err)"
	[ -s dump.err ] && fail "$f: unexpected warning: $(cat dump.err)"
	expect_eq "$(grep -c "^process pid=$pid " dump)" 1 "$f: process record"
	expect_eq "$(dump_events "$f" | sed -E 's/0x[0-9a-f]+/A/' | sort)" \
		"$(printf 'alloc device 0 A %d 0\nalloc device 0 A %d 0\nfree A 0\n' $(((k + 1) << 20)) $(((k + 1) * 4096)) | sort)" \
		"$f: events of image $k"
	dump_events "$f" >>all.trace
	k=$((k - 1))
done
# together, exactly the driver's calls
sort all.trace >all.sorted
log_events calls.log >all.log
diff -u all.log all.sorted >/dev/null || fail "the traces and the simulator log differ: $(diff -u all.log all.sorted | head)"
exit 0
