#!/bin/sh
# The current device is per thread (two devices: a thread that sets device 1
# allocates there, the main thread stays on 0; cudaDeviceReset keeps the
# thread's device); many threads allocate at once, the first of them
# loading the driver; a forked child and an IPC importer in a child work.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rtlib.sh"

# Two devices.
cat >"$T/devices.out" <<'END'
cudaGetDeviceCount 0
count 2
cudaGetDevice 0
device 0
cudaSetDevice(count) 101
thread on 1: set 0 alloc 0 free 0 device 1
thread on 0: set 0 alloc 0 free 0 device 0
cudaMalloc(7MiB) 0
cudaGetDevice 0
device 0
cudaFree 0
cudaSetDevice(1) 0
cudaMalloc(9MiB) 0
cudaFree 0
cudaDeviceReset 0
cudaMalloc(11MiB) 0
cudaFree 0
END
cat >"$T/devices.calls" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=1 addr=X size=3145728 charged=4194304 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=1 addr=X size=3145728 charged=4194304 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=5242880 charged=6291456 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=5242880 charged=6291456 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=7340032 charged=8388608 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=7340032 charged=8388608 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=1 addr=X size=9437184 charged=10485760 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=1 addr=X size=9437184 charged=10485760 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=1 addr=X size=11534336 charged=12582912 result=0 pid=parent
free fn=cuMemFree_v2 kind=device dev=1 addr=X size=11534336 charged=12582912 result=0 pid=parent
END
export SIMCUDA_DEVICES=2
check devices
unset SIMCUDA_DEVICES

# Parent and forked child both allocate.
cat >"$T/fork.out" <<'END'
parent cudaMalloc(1MiB) 0
child cudaMalloc(2MiB) 0
child cudaFree 0
child exit 0
parent cudaFree 0
END
cat >"$T/fork.calls" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=2097152 charged=2097152 result=0 pid=child
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=2097152 charged=2097152 result=0 pid=child
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=1048576 charged=2097152 result=0 pid=parent
END
check fork

# A child opens the parent's IPC handle: foreign memory, not charged.
cat >"$T/ipc.out" <<'END'
cudaMalloc(4MiB) 0
cudaIpcGetMemHandle 0
child cudaIpcOpenMemHandle 0
child cudaIpcCloseMemHandle 0
child exit 0
cudaFree 0
END
cat >"$T/ipc.calls" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=X size=4194304 charged=4194304 result=0 pid=parent
alloc fn=cuIpcOpenMemHandle_v2 kind=foreign dev=0 addr=X size=4194304 charged=0 result=0 pid=child
free fn=cuIpcCloseMemHandle kind=foreign dev=0 addr=X size=4194304 charged=0 result=0 pid=child
free fn=cuMemFree_v2 kind=device dev=0 addr=X size=4194304 charged=4194304 result=0 pid=parent
END
check ipc

# 8 threads x 200 cudaMalloc/cudaFree, all starting before the driver is loaded.
rm -f "$T/calls.log"
sim "$CLIENTS/rt-sim-api" threads >"$T/out" 2>&1 || fail "rt-sim-api threads exited $?"
expect_eq "$(cat "$T/out")" "8 threads x 200 cudaMalloc/cudaFree: 0 failed" "threads"
expect_eq "$(grep -c '^alloc fn=cuMemAlloc_v2 kind=device dev=0 .* result=0 ' "$T/calls.log")" 1600 "allocations"
expect_eq "$(grep -c '^free fn=cuMemFree_v2 kind=device dev=0 .* result=0 ' "$T/calls.log")" 1600 "frees"
