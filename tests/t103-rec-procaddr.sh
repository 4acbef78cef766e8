#!/bin/sh
# cuGetProcAddress, as the CUDA runtime uses it: the wrapper handed back is
# the one of the variant the driver returned (v1 at 2000, _v2 at 3020, _ptsz
# with the per-thread flag, through the nested 4-argument resolver), failed
# look-ups stay failed with their symbolStatus, and each call reaches the
# same driver variant as without memtrace.
. "$(dirname "$0")/lib.sh"

MEMTRACE_RESOLVE_LOG=$T/resolve.log traced "$CLIENTS/dl-procaddr" >"$T/out" 2>"$T/err" ||
	fail "dl-procaddr failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump"
for want in 'cuMemAlloc kind=device .*bytes=4096' 'cuMemAlloc_v2 kind=device .*bytes=1048576' \
	'cuMemAllocAsync kind=async .*bytes=2097152' 'cuMemAllocAsync_ptsz kind=async .*bytes=3145728'; do
	expect_eq "$(count "^alloc .* api=$want result=0" "$T/dump")" 1 "alloc api=$want"
done
for api in cuMemFreeAsync cuMemFreeAsync_ptsz cuMemFree cuMemFree_v2; do
	expect_eq "$(count "^free .* api=$api " "$T/dump")" 1 "free api=$api"
done
# The simulator saw the same variants called.
for fn in cuMemAlloc cuMemAlloc_v2 cuMemAllocAsync cuMemAllocAsync_ptsz; do
	expect_eq "$(count "^alloc fn=$fn kind=(device|async) " "$T/calls.log")" 1 "driver calls of $fn"
done
grep -q '^wrap cuGetProcAddress 11030 0 cuGetProcAddress$' "$T/resolve.log" || fail "no 4-argument resolver handed out"
grep -q '^wrap cuGetProcAddress 12000 0 cuGetProcAddress_v2$' "$T/resolve.log" || fail "no 5-argument resolver handed out"
grep -q '^wrap cuMemAllocAsync 11020 2 cuMemAllocAsync_ptsz$' "$T/resolve.log" || fail "no _ptsz wrapper for flags 2"
grep -q '^wrap cuMemAlloc 2000 0 cuMemAlloc$' "$T/resolve.log" || fail "no v1 wrapper at 2000"
grep -q 'cuNoSuchFunction' "$T/resolve.log" && fail "an unknown name was wrapped"
exit 0
