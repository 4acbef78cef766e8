#!/bin/sh
# cudaGetDriverEntryPoint(ByVersion) hand out working driver functions,
# found through the driver's cuGetProcAddress: cuMemCreate/cuMemRelease
# (how PyTorch reaches VMM), cuMemAlloc at 3020 (cuMemAlloc_v2), the
# per-thread cuMemAllocAsync_ptsz; an unknown symbol is no error (NULL,
# status 1), bad flags are.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rtlib.sh"

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
