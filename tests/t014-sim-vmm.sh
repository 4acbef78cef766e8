#!/bin/sh
# VMM on the simulated driver: cuMemCreate charges its location's device,
# reservations and mappings charge nothing, and physical memory goes back
# only when every reference is released and every mapping unmapped,
# whichever comes last (retains included); plus the call-log lines.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G SIMCUDA_LOG=$T/calls.log "$CLIENTS/drv-sim-vmm" >"$T/out" ||
	fail "drv-sim-vmm exited $?"
cat >"$T/expected" <<'END'
granularity 2097152
start 0 free=759169024
create 3M 1 free=759169024
create 4M 0 free=754974720
reserve 0 at va+0x0
map 0 free=754974720
map overlap 1 free=754974720
map past handle 1 free=754974720
map outside 1 free=754974720
set access 0 free=754974720
range va+0x0 size=4194304
release mapped 0 free=754974720
release again 1 free=754974720
address free while mapped 1 free=754974720
unmap 0 free=759169024
create 2M 0 free=757071872
map 2M 0 free=757071872
unmap partial 1 free=757071872
unmap 0 free=757071872
release 0 free=759169024
create 4M 0 free=754974720
map 0 free=754974720
retain 0 same=yes
release 0 free=754974720
unmap 0 free=754974720
release retained 0 free=759169024
create 4M 0 free=754974720
map low half 0 free=754974720
map high half 0 free=754974720
release 0 free=754974720
unmap both 0 free=759169024
create host 2M 0 free=759169024
release host 0 free=759169024
create 1G 2 free=759169024
address free 0 free=759169024
address free again 1 free=759169024
END
diff -u "$T/expected" "$T/out" || fail "VMM behaviour differs"

sed -E 's/ pid=[0-9]+$//; /kind=(vmm_phys|vmm_retain) /s/addr=0x[0-9a-f]+/addr=H/' "$T/calls.log" >"$T/log"
cat >"$T/expected" <<'END'
alloc fn=cuMemCreate kind=vmm_phys dev=-1 addr=H size=3145728 charged=0 result=1
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemAddressReserve kind=vmm_reserve dev=-1 addr=0x600000000000 size=8388608 charged=0 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000000000 size=4194304 charged=0 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000200000 size=2097152 charged=0 result=1
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000400000 size=4194304 charged=0 result=1
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000600000 size=4194304 charged=0 result=1
free fn=cuMemRelease kind=vmm_retain dev=0 addr=H size=4194304 charged=0 result=0
free fn=cuMemRelease kind=vmm_phys dev=-1 addr=H size=0 charged=0 result=1
free fn=cuMemAddressFree kind=vmm_reserve dev=-1 addr=0x600000000000 size=8388608 charged=0 result=1
free fn=cuMemUnmap kind=vmm_map dev=0 addr=0x600000000000 size=4194304 charged=0 result=0
free fn=cuMemUnmap kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=H size=2097152 charged=2097152 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000400000 size=2097152 charged=0 result=0
free fn=cuMemUnmap kind=vmm_map dev=-1 addr=0x600000400000 size=1048576 charged=0 result=1
free fn=cuMemUnmap kind=vmm_map dev=0 addr=0x600000400000 size=2097152 charged=0 result=0
free fn=cuMemRelease kind=vmm_phys dev=0 addr=H size=2097152 charged=2097152 result=0
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000000000 size=4194304 charged=0 result=0
alloc fn=cuMemRetainAllocationHandle kind=vmm_retain dev=0 addr=H size=4194304 charged=0 result=0
free fn=cuMemRelease kind=vmm_retain dev=0 addr=H size=4194304 charged=0 result=0
free fn=cuMemUnmap kind=vmm_map dev=0 addr=0x600000000000 size=4194304 charged=0 result=0
free fn=cuMemRelease kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000000000 size=2097152 charged=0 result=0
alloc fn=cuMemMap kind=vmm_map dev=0 addr=0x600000200000 size=2097152 charged=0 result=0
free fn=cuMemRelease kind=vmm_retain dev=0 addr=H size=4194304 charged=0 result=0
free fn=cuMemUnmap kind=vmm_map dev=0 addr=0x600000000000 size=2097152 charged=0 result=0
free fn=cuMemUnmap kind=vmm_map dev=0 addr=0x600000200000 size=2097152 charged=0 result=0
free fn=cuMemUnmap kind=vmm_phys dev=0 addr=H size=4194304 charged=4194304 result=0
alloc fn=cuMemCreate kind=vmm_phys dev=-1 addr=H size=2097152 charged=0 result=0
free fn=cuMemRelease kind=vmm_phys dev=-1 addr=H size=2097152 charged=0 result=0
alloc fn=cuMemCreate kind=vmm_phys dev=0 addr=H size=1073741824 charged=0 result=2
free fn=cuMemAddressFree kind=vmm_reserve dev=-1 addr=0x600000000000 size=8388608 charged=0 result=0
free fn=cuMemAddressFree kind=vmm_reserve dev=-1 addr=0x600000000000 size=8388608 charged=0 result=1
END
diff -u "$T/expected" "$T/log" || fail "VMM call log differs"
exit 0
