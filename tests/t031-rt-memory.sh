#!/bin/sh
# The simulated runtime's synchronous memory API, each call reaching the
# driver function the real runtime uses: cudaMalloc -> cuMemAlloc_v2,
# cudaMallocManaged -> cuMemAllocManaged, cudaMallocHost/cudaHostAlloc ->
# cuMemHostAlloc, cudaHostRegister -> cuMemHostRegister_v2, cudaMallocPitch
# and cudaMalloc3D -> cuMemAllocPitch_v2, arrays -> cuArrayCreate_v2 /
# cuArray3DCreate_v2 / cuMipmappedArrayCreate; error codes and last-error
# semantics as the real runtime's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rtlib.sh"

# cudaFree(NULL) 0, double free 1, OOM 2, unknown pointer 1; cudaMalloc(0)
# succeeds without a driver call; the last error stays until read.
cat >"$T/basic.out" <<'END'
cudaFree(NULL) 0
cudaMalloc(1MiB) 0
cudaFree 0
cudaFree(again) 1
cudaGetLastError 1
cudaGetLastError 0
cudaMalloc(0) 0
pointer NULL
cudaMalloc(1TiB) 2
cudaPeekAtLastError 2
cudaGetLastError 2
cudaFree(unknown) 1
cudaMallocManaged(3MiB) 0
cudaFree 0
cudaMallocManaged(bad flags) 1
cudaDeviceSynchronize 0
END
cat >"$T/basic.calls" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=-1 addr=X size=0 charged=0 result=1 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=1099511627776 charged=0 result=2 pid=parent
free fn=cuMemFree_v2 kind=device dev=-1 addr=X size=0 charged=0 result=1 pid=parent
alloc fn=cuMemAllocManaged kind=managed dev=0 addr=X size=3145728 charged=0 result=0 pid=parent
free fn=cuMemFree_v2 kind=managed dev=0 addr=X size=3145728 charged=0 result=0 pid=parent
END
check basic

# Pinned and registered host memory.
cat >"$T/host.out" <<'END'
cudaMallocHost(4096) 0
cudaHostAlloc(8192, mapped) 0
cudaFreeHost 0
cudaFreeHost 0
cudaFreeHost(NULL) 0
cudaHostRegister(64KiB) 0
cudaHostUnregister 0
END
cat >"$T/host.calls" <<'END'
alloc fn=cuMemHostAlloc kind=host dev=-1 addr=X size=4096 charged=0 result=0 pid=parent
alloc fn=cuMemHostAlloc kind=host dev=-1 addr=X size=8192 charged=0 result=0 pid=parent
free fn=cuMemFreeHost kind=host dev=-1 addr=X size=4096 charged=0 result=0 pid=parent
free fn=cuMemFreeHost kind=host dev=-1 addr=X size=8192 charged=0 result=0 pid=parent
alloc fn=cuMemHostRegister_v2 kind=host_register dev=-1 addr=X size=65536 charged=0 result=0 pid=parent
free fn=cuMemHostUnregister kind=host_register dev=-1 addr=X size=65536 charged=0 result=0 pid=parent
END
check host

# 1000 bytes x 10 rows: pitch 1024; cudaMalloc3D: height * depth rows.
cat >"$T/pitch.out" <<'END'
cudaMallocPitch(1000x10) 0
pitch 1024
cudaFree 0
cudaMalloc3D(100x10x5) 0
pitch 512 xsize 100 ysize 10
cudaFree 0
END
cat >"$T/pitch.calls" <<'END'
alloc fn=cuMemAllocPitch_v2 kind=device dev=0 addr=X size=10240 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=10240 charged=2097152 result=0 pid=parent
alloc fn=cuMemAllocPitch_v2 kind=device dev=0 addr=X size=25600 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=25600 charged=2097152 result=0 pid=parent
END
check pitch

# Channel formats map to the driver's; a mixed-width format is error 20.
cat >"$T/arrays.out" <<'END'
cudaMallocArray(float 64x64) 0
cudaMalloc3DArray(uchar4 32x32x4) 0
cudaMallocMipmappedArray(float 64x64, 3 levels) 0
cudaMallocArray(bad format) 20
cudaFreeArray 0
cudaFreeArray 0
cudaFreeMipmappedArray 0
END
cat >"$T/arrays.calls" <<'END'
alloc fn=cuArrayCreate_v2 kind=array dev=0 addr=X size=16384 charged=2097152 result=0 pid=parent
alloc fn=cuArray3DCreate_v2 kind=array dev=0 addr=X size=16384 charged=0 result=0 pid=parent
alloc fn=cuMipmappedArrayCreate kind=array dev=0 addr=X size=21504 charged=0 result=0 pid=parent
free fn=cuArrayDestroy kind=array dev=0 addr=X size=16384 charged=0 result=0 pid=parent
free fn=cuArrayDestroy kind=array dev=0 addr=X size=16384 charged=0 result=0 pid=parent
free fn=cuMipmappedArrayDestroy kind=array dev=0 addr=X size=21504 charged=2097152 result=0 pid=parent
END
check arrays

# Copies by direction (HtoD/DtoH/DtoD), the _ptds variants; data really
# moves through managed memory.
cat >"$T/copy.out" <<'END'
cudaMalloc(4096) 0
cudaMemcpy(HtoD) 0
cudaMemcpy_ptds(DtoH) 0
cudaMemcpy(bad kind) 21
cudaMemcpyAsync(DtoD) 0
cudaMemset 0
cudaMemsetAsync_ptsz 0
cudaFree 0
cudaMallocManaged(4096) 0
cudaMemcpy(HtoD) 0
cudaMemset_ptds 0
managed bytes 7 3 7
cudaFree 0
END
cat >"$T/copy.calls" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=4096 charged=2097152 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=4096 charged=2097152 result=0 pid=parent
alloc fn=cuMemAllocManaged kind=managed dev=0 addr=X size=4096 charged=0 result=0 pid=parent
free fn=cuMemFree_v2 kind=managed dev=0 addr=X size=4096 charged=0 result=0 pid=parent
END
check copy
