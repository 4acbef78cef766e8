#!/bin/sh
# A program linked with -lcuda: v1 (32-bit) and _v2 symbols, pitch, managed,
# pinned host, host register and arrays, each recorded under its own name
# with the right kind and size.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/drv-direct" >"$T/out" 2>"$T/err" || fail "drv-direct failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump"

for want in \
	'api=cuMemAlloc kind=device .*bytes=4096 result=0' \
	'api=cuMemAlloc_v2 kind=device .*bytes=8388608 result=0' \
	'api=cuMemAllocPitch_v2 kind=device .*bytes=10240 result=0' \
	'api=cuMemAllocManaged kind=managed .*bytes=1048576 result=0' \
	'dev=-1 api=cuMemAllocHost_v2 kind=host .*bytes=65536 result=0' \
	'dev=-1 api=cuMemHostAlloc kind=host .*bytes=131072 result=0' \
	'dev=-1 api=cuMemHostRegister_v2 kind=host_register .*bytes=16384 result=0' \
	'api=cuArrayCreate_v2 kind=array,estimated .*bytes=1048576 result=0'
do
	expect_eq "$(count "^alloc .*$want" "$T/dump")" 1 "alloc $want"
done
for api in cuArrayDestroy cuMemHostUnregister cuMemFreeHost cuMemFree_v2 cuMemFree; do
	n=$(count "^free .* api=$api " "$T/dump")
	case $api in cuMemFreeHost) want=2 ;; cuMemFree_v2) want=3 ;; *) want=1 ;; esac
	expect_eq "$n" "$want" "frees by $api"
done
