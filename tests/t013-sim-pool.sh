#!/bin/sh
# Stream-ordered pools on the simulated driver, exactly: chunks of
# max(32 MiB, request), used vs reserved, release on stream, event and
# context synchronize, the release threshold, cuMemPoolTrimTo, HIGH
# attributes, created/destroyed/current pools, _ptsz variants, capture;
# and their call-log lines.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G SIMCUDA_LOG=$T/calls.log "$CLIENTS/drv-sim-pool" >"$T/out" ||
	fail "drv-sim-pool exited $?"
cat >"$T/expected" <<'END'
current is default: yes
start 0 reserved=0 used=0 free=759169024
a 1000 0 reserved=33554432 used=1024 free=725614592
a +0x0
b 40M 0 reserved=75497472 used=41944064 free=683671552
b +0x2000000
c 1M 0 reserved=75497472 used=42992640 free=683671552
c +0x400
free b 0 reserved=75497472 used=1049600 free=683671552
sync 0 reserved=33554432 used=1049600 free=725614592
free a 0 reserved=33554432 used=1048576 free=725614592
free c 0 reserved=33554432 used=0 free=725614592
high reserved=75497472 used=42992640
threshold 64M 0 reserved=33554432 used=0 free=725614592
d 40M 0 reserved=75497472 used=41943040 free=683671552
free d 0 reserved=75497472 used=0 free=683671552
ctx sync 0 reserved=75497472 used=0 free=683671552
trim 40M 0 reserved=41943040 used=0 free=717225984
trim 0 0 reserved=0 used=0 free=759169024
high set 1: 1
high reset reserved=0 used=0
e 1M 0 reserved=33554432 used=1048576 free=725614592
free e 0 reserved=33554432 used=0 free=725614592
event sync 0 reserved=0 used=0 free=759169024
create 0 reserved=0 used=0 free=759169024
from pool 5M 0 reserved=33554432 used=5242880 free=725614592
pointer pool: same
destroy live 0 reserved=0 used=0 free=725614592
free after destroy 725614592
free block 0 free=759169024
destroy again 1, default 1
set 0
async into p2 0 reserved=33554432 used=4096 free=725614592
pointer pool: p2
free 0 reserved=33554432 used=0 free=725614592
destroy p2 0
current is default: yes
cuMemGetDefaultMemPool: default
host location 801
2G 2 reserved=0 used=0 free=759169024
ptsz alloc 0 reserved=33554432 used=512 free=725614592
ptsz free 0 reserved=33554432 used=0 free=725614592
ptsz sync 0 reserved=0 used=0 free=759169024
begin capture 0 reserved=0 used=0 free=759169024
captured alloc 0 reserved=0 used=0 free=759169024
captured at capture+0x0
capturing 1
captured free 0 reserved=0 used=0 free=759169024
end capture 0 graph set
capturing 0
legacy capture 900
stream alloc 0 reserved=33554432 used=1048576 free=725614592
stream free 0 reserved=33554432 used=0 free=725614592
stream sync 0 reserved=0 used=0 free=759169024
destroy stream 0, then alloc on it 400
END
diff -u "$T/expected" "$T/out" || fail "pool behaviour differs"

sed -E 's/ pid=[0-9]+$//; /kind=(pool|pool_grow|pool_shrink) /s/addr=0x[0-9a-f]+/addr=POOL/' \
	"$T/calls.log" >"$T/log"
cat >"$T/expected" <<'END'
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500000000000 size=1000 charged=0 result=0
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=41943040 charged=41943040 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500002000000 size=41943040 charged=0 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500000000400 size=1048576 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500002000000 size=41943040 charged=0 result=0
free fn=cuStreamSynchronize kind=pool_shrink dev=0 addr=POOL size=41943040 charged=41943040 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500000000000 size=1000 charged=0 result=0
free fn=cuMemFree_v2 kind=async dev=0 addr=0x500000000400 size=1048576 charged=0 result=0
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=41943040 charged=41943040 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500002000000 size=41943040 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500002000000 size=41943040 charged=0 result=0
free fn=cuMemPoolTrimTo kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
free fn=cuMemPoolTrimTo kind=pool_shrink dev=0 addr=POOL size=41943040 charged=41943040 result=0
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500000000000 size=1048576 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500000000000 size=1048576 charged=0 result=0
free fn=cuEventSynchronize kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemPoolCreate kind=pool dev=0 addr=POOL size=0 charged=0 result=0
alloc fn=cuMemAllocFromPoolAsync kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocFromPoolAsync kind=async dev=0 addr=0x500000000000 size=5242880 charged=0 result=0
free fn=cuMemPoolDestroy kind=pool dev=0 addr=POOL size=0 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500000000000 size=5242880 charged=0 result=0
free fn=cuMemFreeAsync kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
free fn=cuMemPoolDestroy kind=pool dev=0 addr=POOL size=0 charged=0 result=1
free fn=cuMemPoolDestroy kind=pool dev=-1 addr=POOL size=0 charged=0 result=1
alloc fn=cuMemPoolCreate kind=pool dev=0 addr=POOL size=0 charged=0 result=0
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500000000000 size=4096 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500000000000 size=4096 charged=0 result=0
free fn=cuMemPoolDestroy kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
free fn=cuMemPoolDestroy kind=pool dev=0 addr=POOL size=0 charged=0 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x0 size=2147483648 charged=0 result=2
alloc fn=cuMemAllocAsync_ptsz kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync_ptsz kind=async dev=0 addr=0x500000000000 size=100 charged=0 result=0
free fn=cuMemFreeAsync_ptsz kind=async dev=0 addr=0x500000000000 size=100 charged=0 result=0
free fn=cuStreamSynchronize_ptsz kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=pool_grow dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=async dev=0 addr=0x500000000000 size=1048576 charged=0 result=0
free fn=cuMemFreeAsync kind=async dev=0 addr=0x500000000000 size=1048576 charged=0 result=0
free fn=cuStreamSynchronize kind=pool_shrink dev=0 addr=POOL size=33554432 charged=33554432 result=0
alloc fn=cuMemAllocAsync kind=async dev=-1 addr=0x0 size=1 charged=0 result=400
END
diff -u "$T/expected" "$T/log" || fail "pool call log differs"

# A smaller SIMCUDA_POOL_CHUNK changes the growth step.
LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G SIMCUDA_POOL_CHUNK=4M "$CLIENTS/drv-sim-pool" >"$T/out4" ||
	fail "drv-sim-pool exited $?"
expect_eq "$(grep '^a 1000' "$T/out4")" "a 1000 0 reserved=4194304 used=1024 free=754974720" "4M chunk"
exit 0
