#!/bin/sh
# The device of a failed allocation comes from where the call would have
# allocated: for the runtime the device it uses for the thread
# (cudaGetDevice: the one cudaSetDevice chose, else 0), even when the
# primary context could not be created and no context is current; for the
# driver the current context's device, and -1 with no context at all.
. "$(dirname "$0")/lib.sh"

# allocs TRACE: "api dev bytes result" of each alloc record
allocs() {
	"$MEMTRACE" dump "$1" | awk '$1 == "alloc" {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		print f["api"], f["dev"], f["bytes"], f["result"]
	}'
}

# No context can be created: a context costs more than a device holds.
export SIMCUDA_DEVICES=2 SIMCUDA_MEM=1G SIMCUDA_CTX_OVERHEAD=2G

# cudaSetDevice(1) fails (cudaErrorMemoryAllocation, 2), the runtime keeps
# device 1; the first cudaMalloc fails the same way, on device 1
traced "$CLIENTS/rt-dev-fail" 1 1048576 >"$T/out" 2>"$T/err" || fail "rt-dev-fail 1 failed: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "set 2 malloc 2 get 0 device 1" "cudaSetDevice(1), then cudaMalloc: client output"
expect_eq "$(allocs "$T/trace.bin")" "cudaMalloc 1 1048576 2(runtime)" "cudaSetDevice(1), then a failed cudaMalloc"
expect_eq "$(count '^alloc' "$T/calls.log")" 0 "the driver allocated nothing"

# no cudaSetDevice: the runtime's default device, 0
rm -f "$T/trace.bin" "$T/calls.log"
traced "$CLIENTS/rt-dev-fail" - 1048576 >"$T/out" 2>"$T/err" || fail "rt-dev-fail - failed: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "set 0 malloc 2 get 0 device 0" "cudaMalloc without cudaSetDevice: client output"
expect_eq "$(allocs "$T/trace.bin")" "cudaMalloc 0 1048576 2(runtime)" "a failed cudaMalloc on the default device"

# a context exists, the driver refuses 1 PiB on device 1
unset SIMCUDA_CTX_OVERHEAD
rm -f "$T/trace.bin" "$T/calls.log"
traced "$CLIENTS/rt-dev-fail" 1 0x4000000000000 >"$T/out" 2>"$T/err" || fail "rt-dev-fail 1 1P failed: $(cat "$T/err")"
expect_eq "$(cat "$T/out")" "set 0 malloc 2 get 0 device 1" "cudaMalloc of 1 PiB on device 1: client output"
expect_eq "$(allocs "$T/trace.bin")" "cudaMalloc 1 1125899906842624 2(runtime)" "cudaMalloc of 1 PiB on device 1"
expect_eq "$(log_events "$T/calls.log")" "alloc device 1 0x0 1125899906842624 2" "the driver's failed allocation"

# the driver: no current context at all (CUDA_ERROR_INVALID_CONTEXT, 201),
# then device 1's primary context current and 1 PiB refused on it
rm -f "$T/trace.bin" "$T/calls.log"
traced "$CLIENTS/drv-nocontext" >"$T/out" 2>"$T/err" || fail "drv-nocontext failed: $(cat "$T/err")"
expect_eq "$(allocs "$T/trace.bin")" "cuMemAlloc_v2 -1 1048576 201
cuMemAlloc_v2 1 1125899906842624 2" "driver allocations without and with a context"
same_events "$T/trace.bin" "$T/calls.log"
exit 0
