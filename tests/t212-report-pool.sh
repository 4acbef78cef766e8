#!/bin/sh
# Pools, a caching allocator and its out-of-memory retry (rt-rep-pool, the
# numbers in its header): reserved counts the pool's POOL records and the
# caching allocator's segment; allocated counts the stream-ordered blocks,
# not the segment; the segment left at exit is cache, not a leak; the
# failed 200 MiB request, the 600 MiB free and the retry form the OOM
# signature; the pool's free extent at the peak is 24 MiB.
. "$(dirname "$0")/lib.sh"

jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }

SIMCUDA_MEM=1G SIMCUDA_POOL_CHUNK=32M traced "$CLIENTS/rt-rep-pool" >"$T/out" 2>"$T/err" ||
	fail "rt-rep-pool failed: $(cat "$T/err")"
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/json" || fail "report failed"
MiB=1048576
expect_eq "$(jnum peak_reserved_bytes "$T/json")" $((652 * MiB)) "peak reserved"
expect_eq "$(jnum peak_allocated_bytes "$T/json")" $((608 * MiB)) "peak allocated"
expect_eq "$(jnum cached_bytes_at_peak "$T/json")" $((44 * MiB)) "cached at the peak"
expect_eq "$(jnum left_at_exit_bytes "$T/json")" $((20 * MiB)) "live at exit"
expect_eq "$(jnum cached_share_at_peak "$T/json")" 0.0675 "cached share at the peak (44/652)"
grep -q '^  "leaks": \[\],$' "$T/json" || fail "the caching allocator's segment is reported as a leak"
sed -n '/^  "cache_at_exit"/,/^  \]/p' "$T/json" >"$T/cache"
expect_eq "$(jnum bytes "$T/cache")" $((20 * MiB)) "cache at exit"
grep -q '"function": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long)"' "$T/cache" ||
	grep -q '"function": "_ZN3c104cuda20CUDACachingAllocator' "$T/cache" || fail "cache not at the caching allocator"
expect_eq "$(jnum seen "$T/json")" true "caching allocator seen"
sed -n '/"free_extents_at_peak"/,/\]/p' "$T/json" >"$T/ext"
expect_eq "$(jnum type "$T/ext")" '"pool"' "extent type"
expect_eq "$(jnum size_bytes "$T/ext")" $((32 * MiB)) "pool reserved at the peak"
expect_eq "$(jnum free_bytes "$T/ext")" $((24 * MiB)) "pool free at the peak"
expect_eq "$(jnum largest_free_bytes "$T/ext")" $((24 * MiB)) "largest free extent"
sed -n '/^  "oom_retries"/,/^  \]/p' "$T/json" >"$T/oom"
expect_eq "$(jnum requested_bytes "$T/oom")" $((200 * MiB)) "OOM signature: requested"
expect_eq "$(jnum frees "$T/oom")" 1 "OOM signature: frees"
expect_eq "$(jnum freed_bytes "$T/oom")" $((600 * MiB)) "OOM signature: freed"
expect_eq "$(jnum retry_bytes "$T/oom")" $((200 * MiB)) "OOM signature: retry"
expect_eq "$(jnum retry_result "$T/oom")" 0 "OOM signature: retry succeeded"
sed -n '/^  "failures"/,/^  \]/p' "$T/json" >"$T/fail"
expect_eq "$(jnum reserved_bytes "$T/fail")" $((652 * MiB)) "reserved at the failure"
expect_eq "$(jnum device_free_bytes "$T/fail")" $((72 * MiB)) "device free after the failure"
"$MEMTRACE" report --no-db "$T/trace.bin" >"$T/text" || fail "report failed"
grep -q '+ cached 44.0 MiB (held' "$T/text" || fail "no cached line: $(cat "$T/text")"
grep -q '200 MiB failed, 1 free released 600 MiB, retry of 200 MiB succeeded' "$T/text" || fail "no OOM signature line"
grep -q 'the allocator.s own events unless MEMTRACE_TORCH=0' "$T/text" || fail "no caching allocator note"
exit 0
