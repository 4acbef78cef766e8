#!/bin/sh
# Devices and contexts on the simulated driver with two devices: calls
# before cuInit, device queries, the per-thread context stack, primary
# context reference counts, per-device context overheads and allocations.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_DEVICES=2 SIMCUDA_MEM=1G "$CLIENTS/drv-sim-ctx" >"$T/out" ||
	fail "drv-sim-ctx exited $?"
cat >"$T/expected" <<'END'
preinit current 3
version 13000, error 2 is 'out of memory'
error 201 is CUDA_ERROR_INVALID_CONTEXT
init bad flags 1
init 0
devices 2 'Simulated GPU (memtrace simcuda)' total 1073741824 cc 9.0, device 2: 101
no context: meminfo -201
primary 0 current: free 759169024
create on 1: 0, device 1, free 759169024
alloc 4M: 0 at dev1+0x0, free 754974720
pop 0 (ctx1), device 0, free 759169024
cuCtxGetDevice_v2(ctx1) 1, sync_v2 0
thread: current 0 NULL, device 201
thread: alloc on ctx1 0 at dev1+0x400000
main still on primary: yes
second context on 0: free 444596224
retain again: same yes, free 444596224
release 1: active 1 free 444596224
release 2: active 0 free 759169024
release 3: 201
destroyed ctx0b, stack top is the dead primary: meminfo -201
pop 0
pop empty 201
destroy ctx1 0
destroy again 201
push destroyed 201
new ctx on 1: 0 free 754974720
stream device 1 ctx ctx1
extra context 0: 0 free 440401920
extra context 1: 0 free 125829120
extra context 2: 2 free 125829120
END
diff -u "$T/expected" "$T/out" || fail "contexts differ"

# SIMCUDA_CTX_OVERHEAD sets what a context costs.
LD_LIBRARY_PATH=$SIM SIMCUDA_DEVICES=2 SIMCUDA_MEM=1G SIMCUDA_CTX_OVERHEAD=0 "$CLIENTS/drv-sim-ctx" >"$T/out0" ||
	fail "drv-sim-ctx exited $?"
expect_eq "$(grep '^primary 0 current' "$T/out0")" "primary 0 current: free 1073741824" "no overhead"
exit 0
