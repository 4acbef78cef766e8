#!/bin/sh
# 2,000 short threads, 64 alive at once (one cudaMalloc and one cudaFree
# each): the young threads share a few slabs (preload/writer.c) instead of
# claiming a 64 KiB slab each, so the trace stays under 1 MB (it was 2.2 MB
# in waves, 4.3 MB when the 64 wait for each other), and no event is lost.
# With "hold" the 64 threads of a wave all allocate before any frees
# (rt-short-threads' barrier): thread i allocates 4096 * (i + 1) bytes, so
# the peak is the last full wave's, threads 1920-1983:
# 4096 * (1921 + ... + 1984) = 4096 * 64 * 1952.5 = 511,836,160 bytes,
# 64 allocations; the report finds it only if every one of them is there.
. "$(dirname "$0")/lib.sh"

run() {     # name args...
	name=$1
	shift
	rm -f "$T"/st*.bin
	LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/st.bin MEMTRACE_DEPTH=8 \
		"$CLIENTS/rt-short-threads" "$@" >"$T/tids" 2>"$T/err" || fail "$name: client failed: $(cat "$T/err")"
	size=$(wc -c <"$T/st.bin")
	[ "$size" -le 1000000 ] || fail "$name: a $size-byte trace for 4000 events, at most 1000000 expected"
	"$MEMTRACE" dump "$T/st.bin" >"$T/dump" 2>"$T/err" || fail "$name: dump failed: $(cat "$T/err")"
	expect_eq "$(grep -c '^alloc ' "$T/dump")" 2000 "$name: allocs"
	expect_eq "$(grep -c '^free ' "$T/dump")" 2000 "$name: frees"
	# each thread's own alloc (its size) and free, under its own tid
	awk '$1 == "alloc" || $1 == "free" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if ($1 == "alloc") { a[f["tid"]]++; b[f["tid"]] = f["bytes"] } else fr[f["tid"]]++
		t[f["tid"]] = 1 }
		END { for (k in t) print k, a[k] + 0, fr[k] + 0, b[k] + 0 }' "$T/dump" | sort >"$T/have"
	awk '{ print $4, 1, 1, 4096 * ($2 + 1) }' "$T/tids" | sort >"$T/want"
	diff "$T/want" "$T/have" >"$T/diff" || fail "$name: records under the wrong thread: $(head -n 5 "$T/diff")"
	"$MEMTRACE" report --no-db --json "$T/st.bin" >"$T/json" 2>"$T/err" || fail "$name: report failed: $(cat "$T/err")"
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["processes"][0]
print(p["events"], p["failed"], p["unknown_frees"], p["peak_reserved_bytes"])' "$T/json" >"$T/got"
}

run "64 at a time" 2000 64
set -- $(cat "$T/got")
expect_eq "$1 $2 $3" "4000 0 0" "64 at a time: events, failed, unknown frees"

run "64 alive at once" 2000 64 hold
expect_eq "$(cat "$T/got")" "4000 0 0 511836160" "64 alive at once: events, failed, unknown frees, peak"
