#!/bin/sh
# The simulated driver's memory model, exactly: rounding and charging
# (512 B blocks in 2 MiB pages, 2 MiB units above 1 MiB), first-fit reuse,
# OOM exactly at capacity (1 GiB minus the 300 MiB context), frees, pitch,
# the 32-bit v1 entry points, managed, pinned and registered host memory,
# IPC (charges nothing), arrays, pointer attributes, and no context.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_MEM=1G "$CLIENTS/drv-sim-mem" >"$T/out" || fail "drv-sim-mem exited $?"
cat >"$T/expected" <<'END'
preinit 3
info 759169024 1073741824
a alloc(1) 0 +0x0 free 757071872
b alloc(512) 0 +0x200 free 757071872
c alloc(1048576) 0 +0x400 free 757071872
d alloc(1048577) 0 +0x200000 free 754974720
e alloc(1048576) 0 +0x400000 free 752877568
a free 0 free 752877568
b free 0 free 752877568
c free 0 free 754974720
f alloc(100) 0 +0x500000 free 754974720
g alloc(4194304) 0 +0x600000 free 750780416
h alloc(2097152) 0 +0x0 free 748683264
d free 0 free 750780416
e free 0 free 750780416
f free 0 free 752877568
g free 0 free 757071872
h free 0 free 759169024
x alloc(759169024) 0 +0x0 free 0
one alloc(1) 2 +0x0 free 0
x free 0 free 759169024
over alloc(759169025) 2 +0x0 free 759169024
zero alloc(0) 1 +0x0 free 759169024
free-unknown 1
free-null 0
y alloc(1) 0 +0x0 free 757071872
y free 0 free 759169024
y-again free 1 free 759169024
pitch 0 pitch=1024 size=3072 base=+0x0 free 757071872
pitch free 0 free 759169024
pitch-elem3 1
v1 0 addr=0x80000000 base=0x80000000 size=4096 free 757071872
v1 free 0 free 759169024
z alloc(10000) 0 +0x0 free 757071872
range base=+0x0 size=10000
attrs ordinal=0 type=2 start=+0x0 size=10000 pool=(nil) ctx=same unknown=1
z free 0 free 759169024
managed 0 is_managed=1 free 759169024
managed free 0 free 759169024
hostalloc 0 devptr=same free 759169024
freehost 0
freehost-again 1
allochost 0 0
register 0 overlap 712 unregister 0 again 713 free 759169024
q alloc(3145728) 0 +0x0 free 754974720
ipc get 0 open 0 addr=foreign+0x0 size=3145728 free 754974720
ipc close 0 free 754974720
ipc close-again 1 free 754974720
q free 0 free 759169024
array 0 free 742391808
array desc 1024x1024 ch=4
array3d 0 free 740294656
mipmap 0 free 740294656
array destroy 0 free 757071872
array3d destroy 0 free 757071872
mipmap destroy 0 free 759169024
array destroy-again 400 free 759169024
thread alloc 201
end free 759169024
END
diff -u "$T/expected" "$T/out" || fail "memory model differs"
exit 0
