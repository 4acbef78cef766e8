#!/bin/sh
# Stream-ordered allocation and pools: cudaMallocAsync reaches
# cuMemAllocAsync, cudaMallocAsync_ptsz cuMemAllocAsync_ptsz (the pointer
# looked up with flag 2), likewise for frees and cudaMallocFromPoolAsync;
# cudaFree takes a pool pointer; pools are created, trimmed, destroyed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rtlib.sh"

# Async allocations on a created stream, the per-thread stream and the
# legacy one; the pool grows and shrinks at a synchronize.
cat >"$T/async.out" <<'END'
cudaStreamCreate 0
cudaMallocAsync(1MiB) 0
cudaFreeAsync 0
cudaMallocAsync_ptsz(2MiB) 0
cudaFreeAsync_ptsz 0
cudaStreamSynchronize_ptsz 0
cudaMallocAsync(3MiB, legacy) 0
cudaFree(async pointer) 0
cudaStreamSynchronize 0
cudaEventCreate 0
cudaEventRecord 0
cudaEventSynchronize 0
cudaEventDestroy 0
cudaStreamDestroy 0
END
cat >"$T/async.calls" <<'END'
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
alloc fn=cuMemAllocAsync kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
free fn=cuMemFreeAsync kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
alloc fn=cuMemAllocAsync_ptsz kind=async dev=0 addr=X size=2097152 charged=0 result=0 pid=parent
free fn=cuMemFreeAsync_ptsz kind=async dev=0 addr=X size=2097152 charged=0 result=0 pid=parent
free fn=cuStreamSynchronize_ptsz kind=pool_shrink dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
alloc fn=cuMemAllocAsync kind=async dev=0 addr=X size=3145728 charged=0 result=0 pid=parent
free fn=cuMemFree_v2 kind=async dev=0 addr=X size=3145728 charged=0 result=0 pid=parent
free fn=cuStreamSynchronize kind=pool_shrink dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
END
check async

# A created pool as the device's current one; trimming returns its memory.
cat >"$T/pools.out" <<'END'
cudaDeviceGetDefaultMemPool 0
cudaMemPoolCreate 0
cudaDeviceSetMemPool 0
cudaDeviceGetMemPool 0
current pool is created
cudaMallocFromPoolAsync(1MiB) 0
cudaMallocFromPoolAsync_ptsz(1MiB) 0
cudaMemPoolGetAttribute(used) 0
used 2097152
cudaFreeAsync 0
cudaFreeAsync_ptsz 0
cudaMemPoolSetAttribute(threshold) 0
cudaMemPoolGetAttribute(threshold) 0
threshold 67108864
cudaDeviceSynchronize 0
cudaMemPoolGetAttribute(reserved) 0
reserved kept
cudaMemPoolTrimTo(0) 0
cudaMemPoolGetAttribute(reserved) 0
reserved 0
cudaDeviceSetMemPool(default) 0
cudaMemPoolDestroy 0
END
cat >"$T/pools.calls" <<'END'
alloc fn=cuMemPoolCreate kind=pool dev=0 addr=X size=0 charged=0 result=0 pid=parent
alloc fn=cuMemAllocFromPoolAsync kind=pool_grow dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
alloc fn=cuMemAllocFromPoolAsync kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
alloc fn=cuMemAllocFromPoolAsync_ptsz kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
free fn=cuMemFreeAsync kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
free fn=cuMemFreeAsync_ptsz kind=async dev=0 addr=X size=1048576 charged=0 result=0 pid=parent
free fn=cuMemPoolTrimTo kind=pool_shrink dev=0 addr=X size=33554432 charged=33554432 result=0 pid=parent
free fn=cuMemPoolDestroy kind=pool dev=0 addr=X size=0 charged=0 result=0 pid=parent
END
check pools
