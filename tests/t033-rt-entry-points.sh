#!/bin/sh
# cudaGetDriverEntryPoint(ByVersion) hand out working driver functions,
# found through the driver's cuGetProcAddress: cuMemCreate/cuMemRelease
# (how PyTorch reaches VMM), cuMemAlloc at 3020 (cuMemAlloc_v2), the
# per-thread cuMemAllocAsync_ptsz; an unknown symbol is no error (NULL,
# status 1), bad flags are.
. "$(dirname "$0")/lib.sh"

# calls LOG: the driver's call log with addresses masked and pids named
# by order of appearance (parent, then child).
calls() {
	awk '{
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^addr=/) $i = "addr=X"
			if ($i ~ /^pid=/) {
				p = substr($i, 5)
				if (!(p in who)) who[p] = n++ ? "child" : "parent"
				$i = "pid=" who[p]
			}
		}
		print
	}' "$1"
}

# check CASE: `rt-sim-api CASE` on the simulated CUDA must print
# $T/CASE.out and make the driver calls $T/CASE.calls.
check() {
	rm -f "$T/calls.log"
	sim "$CLIENTS/rt-sim-api" "$1" >"$T/out" 2>&1 || fail "rt-sim-api $1 exited $?"
	diff -u "$T/$1.out" "$T/out" || fail "rt-sim-api $1: output differs"
	calls "$T/calls.log" >"$T/calls"
	diff -u "$T/$1.calls" "$T/calls" || fail "rt-sim-api $1: driver calls differ"
}

# Driver functions called through the runtime's entry points.
cat >"$T/entry.out" <<'END'
cudaFree(NULL) 0
cudaGetDriverEntryPoint(cuMemCreate) 0
found 0
cudaGetDriverEntryPoint(cuMemRelease) 0
cuMemCreate(2MiB) 0
cuMemRelease 0
cudaGetDriverEntryPointByVersion(cuMemAlloc, 3020) 0
cudaGetDriverEntryPointByVersion(cuMemFree, 3020) 0
cuMemAlloc_v2(1MiB) 0
cuMemFree_v2 0
cudaGetDriverEntryPoint(cuNoSuchFunction) 0
found 1, NULL
cudaGetDriverEntryPoint(cuMemAllocAsync, per-thread) 0
cuMemAllocAsync_ptsz(1MiB) 0
cudaFree 0
cudaGetDriverEntryPoint(bad flags) 1
END
cat >"$T/entry.calls" <<'END'
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=X size=2097152 charged=2097152 result=0 pid=parent
free fn=cuMemRelease kind=vmm_phys dev=0 addr=X size=2097152 charged=2097152 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
alloc fn=cuMemAllocAsync_ptsz kind=pool_grow dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
alloc fn=cuMemAllocAsync_ptsz kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
free fn=cuMemFree_v2 kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
END
check entry
