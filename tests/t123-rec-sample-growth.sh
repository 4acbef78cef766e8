#!/bin/sh
# Device memory samples at new highs: a device is sampled (cuMemGetInfo)
# when the bytes allocated on it since its last sample reach 1% of the
# device used then, at most once every MEMTRACE_SAMPLE_GROWTH_US (default
# 1000); a sample held back by that limit is taken at the start of the
# thread's next free (those have a window of their own: at most two such
# samples per limit), so the peak's state is measured. MEMTRACE_SAMPLE_GROWTH_US=0
# turns these samples off. Runs are shorter than MEMTRACE_SAMPLE_MS's
# 100 ms, so no periodic sample comes between.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-sample-rate" ] || skip "no $CLIENTS/rt-sample-rate (make tests-build)"
MiB=1048576

# run NAME N MIB GAP_US [VAR=VALUE...]: the client traced, dump in $T/dump
run() {
	name=$1 n=$2 mib=$3 gap=$4
	shift 4
	rm -f "$T"/r*.bin
	env LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/r.bin MEMTRACE_DEPTH=4 "$@" \
		"$CLIENTS/rt-sample-rate" "$n" "$mib" "$gap" >"$T/out" 2>"$T/err" || fail "$name: client failed: $(cat "$T/err")"
	"$MEMTRACE" dump "$T/r.bin" >"$T/dump" 2>"$T/err" || fail "$name: dump failed: $(cat "$T/err")"
	expect_eq "$(grep -cE '^alloc .* result=0 ' "$T/dump")" "$n" "$name: allocations"
}

# figures: "SAMPLES LEAST_GAP_NS MAX_USED_MIB SPAN_MS LAST_SAMPLE_BEFORE_FREES AT_FREE"
# of the samples taken before the first free (LEAST_GAP_NS: the least time
# between two of them, -1 with one; SPAN_MS: from the first allocation to
# the first free, rounded up); MAX_USED_MIB of all samples;
# LAST_SAMPLE_BEFORE_FREES: 1 when no sample came after the first free
# began; AT_FREE: samples taken at its start (they carry its time)
figures() {
	awk '{ delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }; sub(/^\+/, "", f["time"]); f["time"] += 0 }
	NR == FNR { if ($1 == "free" && ffree == "") ffree = f["time"]; next }
	$1 == "alloc" && first == "" { first = f["time"] }
	$1 == "meminfo" { u = (f["total"] - f["free"]) / 1048576; if (u > max) max = u; last = f["time"]
		if (ffree != "" && f["time"] >= ffree) { at++; next }
		n++; if (n > 1 && (gap == "" || f["time"] - prev < gap)) gap = f["time"] - prev; prev = f["time"] }
	END { printf "%d %d %d %d %d %d\n", n, gap == "" ? -1 : gap, max, int((ffree - first) / 1e6) + 1,
		last <= ffree, at }' "$T/dump" "$T/dump"
}

# 1. Fifty 16 MiB allocations 200 us apart: each is a new high above 1%
# (16 MiB > 1% of the at most 1100 MiB used), but samples at allocations
# come at most once a millisecond; the last allocations' sample, when
# held back, is taken at the start of the first free (samples at frees
# have their own window): the peak, 300 MiB context + 800 MiB, is measured.
run "rate limit" 50 16 200
set -- $(figures)
[ "$1" -ge 3 ] || fail "rate limit: $1 samples, expected some during the allocations"
[ "$1" -le $(($4 + 1)) ] || fail "rate limit: $1 samples in $4 ms: more than one a millisecond"
[ "$2" -ge 1000000 ] || fail "rate limit: two samples $2 ns apart, at least 1 ms expected"
expect_eq "$3 $5 $(($6 <= 1))" "1100 1 1" "rate limit: most device used sampled (MiB), none after the frees began, at most one at the first"

# 2. A longer limit, the same run: samples at least 5 ms apart.
run "5 ms limit" 50 16 200 MEMTRACE_SAMPLE_GROWTH_US=5000
set -- $(figures)
[ "$2" -ge 5000000 ] || fail "5 ms limit: two samples $2 ns apart"
expect_eq "$3 $5 $(($6 <= 1))" "1100 1 1" "5 ms limit: most device used sampled (MiB), none after the frees began, at most one at the first"

# 2b. Back to back (a burst shorter than a few limits): whatever the
# samples during it, the top is measured, before the frees.
run "burst" 20 16 0
expect_eq "$(figures | cut -d' ' -f3,5)" "620 1" "burst: most device used (MiB), none after the frees began"

# 3. Off: only the sample at the device's first use.
run "off" 50 16 200 MEMTRACE_SAMPLE_GROWTH_US=0
expect_eq "$(figures | cut -d' ' -f1,3)" "1 316" "off: samples, device used (MiB)"

# 4. The 1% step: 2 MiB allocations 2 ms apart (past the rate limit). The
# first sample sees 302 MiB used (step 3.02 MiB): every second allocation
# completes a step, and the step grows with the device used (at 318 MiB,
# 3.18 MiB: still two allocations).
run "1% step" 10 2 2000
expect_eq "$(awk '$1 == "meminfo" { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	printf "%s%d", n++ ? " " : "", (f["total"] - f["free"]) / 1048576 }' "$T/dump")" "302 306 310 314 318" \
	"1% step: device used at each sample (MiB)"
