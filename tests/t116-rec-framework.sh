#!/bin/sh
# Framework records (format 1.2) through include/memtrace/framework.h: the
# dl-fw client finds the three entry points with dlsym(RTLD_DEFAULT) and
# hands over two stacks (one asked for twice, same id), a note and 48
# events (six of each action) in two batches of 24. memtrace dump shows
# exactly those records, the stacks and the note in the client's own slab,
# the events after them in a slab of their own, each at its own time.
# Without memtrace the entry points are absent and the program runs on; a
# SIGKILL after the first batch keeps that batch.
. "$(dirname "$0")/lib.sh"

# The 48 events as dump prints them, event k at T0 + 1000 (k + 1) ns;
# OFF = T0 - the trace's start (header start_mono_ns, at offset 32).
expected_events() {
	awk -v off="$1" -v n="$2" 'BEGIN {
		split("alloc free_requested free_completed segment_alloc segment_free segment_map segment_unmap oom", name, " ")
		for (k = 0; k < n; k++) {
			a = 1 + k % 8
			printf "fw_event time=+%d dev=%d action=%s addr=0x%s size=%d stream=0x%s x=%d stack=%d\n",
				off + 1000 * (k + 1), k % 2, name[a],
				a == 8 ? "0" : sprintf("7f%010x", k * 4096), 512 * (k + 1),
				k % 3 == 0 ? "77" : "0", a == 8 ? 4096 : 0, k < 2 ? 1 : k == 8 ? 2 : 0
		}
	}'
}
start_of() { od -An -tu8 -j 32 -N 8 "$1" | tr -d ' '; }

# 1. Without memtrace: no entry points, nothing written, exit 0.
(cd "$T" && "$CLIENTS/dl-fw" run) >"$T/plain.out" 2>&1 || fail "dl-fw without memtrace failed: $(cat "$T/plain.out")"
expect_eq "$(cat "$T/plain.out")" "no memtrace" "dl-fw without memtrace"
expect_eq "$(ls "$T")" "plain.out" "files written without memtrace"

# 2. Under memtrace run.
traced "$CLIENTS/dl-fw" run >"$T/out" 2>"$T/err" || fail "dl-fw under memtrace failed: $(cat "$T/err")"
expect_eq "$(sed -n 2,3p "$T/out" | tr '\n' ' ')" "batch 24 batch 24 " "batches written"
t0=$(sed -n 's/^t0=\([0-9]*\) .*/\1/p' "$T/out")
expect_eq "$(sed -n 's/^t0=[0-9]* //p' "$T/out")" "stacks=1,2" "stack ids"
start=$(start_of "$T/trace.bin")
off=$((t0 - start))
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" 2>"$T/dump.err" || fail "dump: $(cat "$T/dump.err")"
head -n 1 "$T/dump" | grep -q "^# trace '.*': format 2\.2, " || fail "not format 2: $(head -n 1 "$T/dump")"
{
	echo 'fw_stack id=1 frames="train.py:42 step < /lib/nn.py:7 forward"'
	echo 'fw_stack id=2 frames="data.py:9 load"'
	printf '%s\n' 'fw_info time=T text="framework=dl-fw\nversion=1\n"'
	echo 'exit'
	expected_events "$off" 48
} >"$T/want"
grep -E '^(fw_|exit )' "$T/dump" | sed -e 's/^fw_info time=+[0-9]*/fw_info time=T/' -e 's/^exit .*/exit/' >"$T/have"
diff -u "$T/want" "$T/have" >"$T/diff" || fail "framework records differ: $(head -n 20 "$T/diff")"
# The note was written before T0 was read, after the trace started.
info_t=$(sed -n 's/^fw_info time=+\([0-9]*\) .*/\1/p' "$T/dump")
[ "$info_t" -le "$off" ] || fail "fw_info at +$info_t, after T0 (+$off)"

# 3. SIGKILL after the first batch: the batch is in the trace, no exit record.
rm -f "$T/trace.bin" "$T/batched"
LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/trace.bin \
	"$CLIENTS/dl-fw" kill "$T/batched" >"$T/kill.out" 2>&1 &
pid=$!
i=0
while [ ! -s "$T/batched" ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
[ -s "$T/batched" ] || { kill -9 $pid; fail "dl-fw kill never wrote its first batch"; }
kill -9 $pid
wait $pid 2>/dev/null
t0=$(sed -n 's/^t0=\([0-9]*\) .*/\1/p' "$T/kill.out")
off=$((t0 - $(start_of "$T/trace.bin")))
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" 2>"$T/dump.err" || fail "dump after SIGKILL: $(cat "$T/dump.err")"
expected_events "$off" 24 >"$T/want"
grep '^fw_event' "$T/dump" >"$T/have"
diff -u "$T/want" "$T/have" >"$T/diff" || fail "first batch after SIGKILL differs: $(head -n 20 "$T/diff")"
expect_eq "$(grep -c '^exit ' "$T/dump")" 0 "exit records after SIGKILL"
expect_eq "$(grep -c '^fw_stack' "$T/dump")" 2 "stacks after SIGKILL"
