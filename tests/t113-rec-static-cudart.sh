#!/bin/sh
# nvcc's default: the CUDA runtime linked statically into the program. Its
# cudaMalloc is not interposable; memtrace reaches it through the runtime's
# dlsym of cuGetProcAddress_v2 and its look-ups, which must return
# memtrace's wrappers of the right variants.
. "$(dirname "$0")/lib.sh"

[ -x "$CLIENTS/realrt-static-malloc" ] || skip "no libcudart_static.a under CUDA_HOME"
LD_LIBRARY_PATH=$B/simcuda/driver LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/trace.bin \
	MEMTRACE_RESOLVE_LOG=$T/resolve.log "$CLIENTS/realrt-static-malloc" >"$T/out" 2>"$T/err" ||
	fail "realrt-static-malloc failed: $(cat "$T/err")"
for want in "cuGetProcAddress 12000 0 cuGetProcAddress_v2" "cuMemAlloc 3020 0 cuMemAlloc_v2" \
	"cuMemAllocAsync 11020 2 cuMemAllocAsync_ptsz" "cuMemFree 3020 0 cuMemFree_v2"; do
	grep -qx "wrap $want" "$T/resolve.log" || fail "the static runtime did not get the wrapper: $want"
done
# The program's result is the same as without memtrace.
LD_LIBRARY_PATH=$B/simcuda/driver "$CLIENTS/realrt-static-malloc" >"$T/out.plain" 2>&1
diff -u "$T/out.plain" "$T/out" || fail "output differs under memtrace"
