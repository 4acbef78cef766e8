#!/bin/sh
# The simulated driver's call log (SIMCUDA_LOG): one line per memory
# operation, failed ones included, naming the exported variant called.
# Host addresses and handles vary from run to run and are masked.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G SIMCUDA_LOG=$T/calls.log "$CLIENTS/drv-sim-mem" >/dev/null ||
	fail "drv-sim-mem exited $?"
grep -Evq " pid=[0-9]+$" "$T/calls.log" && fail "a line without a pid"
sed -E 's/ pid=[0-9]+$//; /kind=(managed|host|host_register|array) /s/addr=0x[0-9a-f]+/addr=X/' \
	"$T/calls.log" >"$T/log"
cat >"$T/expected" <<'END'
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=1 charged=2097152 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000200 size=512 charged=0 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000400 size=1048576 charged=0 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000200000 size=1048577 charged=2097152 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000400000 size=1048576 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=1 charged=0 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000200 size=512 charged=0 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000400 size=1048576 charged=2097152 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000500000 size=100 charged=0 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000600000 size=4194304 charged=4194304 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=2097152 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000200000 size=1048577 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000400000 size=1048576 charged=0 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000500000 size=100 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000600000 size=4194304 charged=4194304 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=2097152 charged=2097152 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=759169024 charged=759169024 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x0 size=1 charged=0 result=2
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=759169024 charged=759169024 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x0 size=759169025 charged=0 result=2
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x0 size=0 charged=0 result=1
free fn=cuMemFree_v2 kind=device dev=-1 addr=0x500000001000 size=0 charged=0 result=1
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=1 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=1 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=-1 addr=0x500000000000 size=0 charged=0 result=1
alloc fn=cuMemAllocPitch_v2 kind=device dev=0 addr=0x500000000000 size=3072 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=3072 charged=2097152 result=0
alloc fn=cuMemAllocPitch_v2 kind=device dev=0 addr=0x0 size=0 charged=0 result=1
alloc fn=cuMemAlloc kind=device dev=0 addr=0x80000000 size=4096 charged=2097152 result=0
free fn=cuMemFree kind=device dev=0 addr=0x80000000 size=4096 charged=2097152 result=0
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=10000 charged=2097152 result=0
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=10000 charged=2097152 result=0
alloc fn=cuMemAllocManaged kind=managed dev=0 addr=X size=8192 charged=0 result=0
free fn=cuMemFree_v2 kind=managed dev=0 addr=X size=8192 charged=0 result=0
alloc fn=cuMemHostAlloc kind=host dev=-1 addr=X size=4096 charged=0 result=0
free fn=cuMemFreeHost kind=host dev=-1 addr=X size=4096 charged=0 result=0
free fn=cuMemFreeHost kind=host dev=-1 addr=X size=0 charged=0 result=1
alloc fn=cuMemAllocHost_v2 kind=host dev=-1 addr=X size=100 charged=0 result=0
free fn=cuMemFreeHost kind=host dev=-1 addr=X size=100 charged=0 result=0
alloc fn=cuMemHostRegister_v2 kind=host_register dev=-1 addr=X size=65536 charged=0 result=0
alloc fn=cuMemHostRegister_v2 kind=host_register dev=-1 addr=X size=4096 charged=0 result=712
free fn=cuMemHostUnregister kind=host_register dev=-1 addr=X size=65536 charged=0 result=0
free fn=cuMemHostUnregister kind=host_register dev=-1 addr=X size=0 charged=0 result=713
alloc fn=cuMemAlloc_v2 kind=device dev=0 addr=0x500000000000 size=3145728 charged=4194304 result=0
alloc fn=cuIpcOpenMemHandle_v2 kind=foreign dev=0 addr=0x680000000000 size=3145728 charged=0 result=0
free fn=cuIpcCloseMemHandle kind=foreign dev=0 addr=0x680000000000 size=3145728 charged=0 result=0
free fn=cuIpcCloseMemHandle kind=foreign dev=-1 addr=0x680000000000 size=0 charged=0 result=1
free fn=cuMemFree_v2 kind=device dev=0 addr=0x500000000000 size=3145728 charged=4194304 result=0
alloc fn=cuArrayCreate_v2 kind=array dev=0 addr=X size=16777216 charged=16777216 result=0
alloc fn=cuArray3DCreate_v2 kind=array dev=0 addr=X size=262144 charged=2097152 result=0
alloc fn=cuMipmappedArrayCreate kind=array dev=0 addr=X size=344064 charged=0 result=0
free fn=cuArrayDestroy kind=array dev=0 addr=X size=16777216 charged=16777216 result=0
free fn=cuArrayDestroy kind=array dev=0 addr=X size=262144 charged=0 result=0
free fn=cuMipmappedArrayDestroy kind=array dev=0 addr=X size=344064 charged=2097152 result=0
free fn=cuArrayDestroy kind=array dev=-1 addr=X size=0 charged=0 result=400
alloc fn=cuMemAlloc_v2 kind=device dev=-1 addr=0x0 size=1 charged=0 result=201
END
diff -u "$T/expected" "$T/log" || fail "call log differs"

# Without SIMCUDA_LOG nothing is written anywhere.
(cd "$T" && LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G "$CLIENTS/drv-sim-mem" >/dev/null) || fail "run without log"
expect_eq "$(ls "$T" | sort | tr '\n' ' ')" "calls.log expected log " "files after a run without log"
exit 0
