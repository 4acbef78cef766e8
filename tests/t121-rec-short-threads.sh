#!/bin/sh
# Many short-lived threads (1 cudaMalloc + 1 cudaFree each): a thread that
# ends gives the unused tail of its slab to the next one (format 2), so the
# trace grows with the events, not with the threads; and every record keeps
# its own thread: each thread's one alloc (4096 * (i + 1) bytes) and one
# free carry the tid the client saw, whatever slab they landed in.
. "$(dirname "$0")/lib.sh"

check() {   # name threads wave
	rm -f "$T"/st*.bin
	LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/st.bin MEMTRACE_DEPTH=8 \
		"$CLIENTS/rt-short-threads" "$2" "$3" >"$T/tids" 2>"$T/err" || fail "$1: client failed: $(cat "$T/err")"
	"$MEMTRACE" dump "$T/st.bin" >"$T/dump" 2>"$T/err" || fail "$1: dump failed: $(cat "$T/err")"
	expect_eq "$(grep -cE '^(alloc|free) ' "$T/dump")" $(($2 * 2)) "$1: events"
	# per tid: "allocs frees bytes" from the trace, and what the client says
	awk '$1 == "alloc" || $1 == "free" {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if ($1 == "alloc") { a[f["tid"]]++; b[f["tid"]] = f["bytes"] } else fr[f["tid"]]++
		t[f["tid"]] = 1 }
		END { for (k in t) print k, a[k] + 0, fr[k] + 0, b[k] + 0 }' "$T/dump" | sort >"$T/have"
	awk '{ print $4, 1, 1, 4096 * ($2 + 1) }' "$T/tids" | sort >"$T/want"
	diff "$T/want" "$T/have" >"$T/diff" || fail "$1: records under the wrong thread: $(head -n 5 "$T/diff")"
	size=$(wc -c <"$T/st.bin")
	[ "$size" -le "$4" ] || fail "$1: a $size-byte trace for $(($2 * 2)) events, at most $4 expected"
}

# one thread at a time: each takes over its predecessor's tail; the
# header's 64 KiB, the main thread's slab and a few slabs of events
check "2000 threads one by one" 2000 1 $((8 * 65536))
# 8 at a time: tails are taken by whoever starts next
check "2000 threads 8 at a time" 2000 8 $((16 * 65536))
