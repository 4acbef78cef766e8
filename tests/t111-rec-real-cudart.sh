#!/bin/sh
# The real libcudart.so.13 over the simulated driver, under memtrace: the
# runtime's one dlsym of cuGetProcAddress_v2 gets memtrace's resolver, and
# its look-ups of allocation functions get memtrace's wrappers, of the
# variant the driver returned (the _ptsz ones for the per-thread flag).
# Its allocations fail without a GPU (the real runtime cannot initialize on
# a simulated driver); they are recorded at the runtime level with their
# cudaError_t.
. "$(dirname "$0")/lib.sh"

[ -x "$CLIENTS/realrt-traced" ] || skip "no real libcudart.so.13 under CUDA_HOME"
LD_LIBRARY_PATH=$B/simcuda/driver LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/trace.bin \
	MEMTRACE_RESOLVE_LOG=$T/resolve.log "$CLIENTS/realrt-traced" >"$T/out" 2>"$T/err" ||
	fail "realrt-traced failed: $(cat "$T/err")"
for want in "cuGetProcAddress 12000 0 cuGetProcAddress_v2" "cuMemAlloc 3020 0 cuMemAlloc_v2" \
	"cuMemFree 3020 0 cuMemFree_v2" "cuMemAllocAsync 11020 0 cuMemAllocAsync" \
	"cuMemAllocAsync 11020 2 cuMemAllocAsync_ptsz" "cuMemFreeAsync 11020 2 cuMemFreeAsync_ptsz" \
	"cuMemHostAlloc 2020 0 cuMemHostAlloc"; do
	grep -qx "wrap $want" "$T/resolve.log" || fail "the real runtime did not get the wrapper: $want
$(cat "$T/resolve.log")"
done
rc=$(sed -n 's/^cudaMalloc: //p' "$T/out")
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
expect_eq "$(count "^alloc .* api=cudaMalloc kind=device addr=0x0 bytes=1048576 result=$rc\(runtime\)" "$T/dump")" 1 "runtime-level failed cudaMalloc"
