#!/bin/sh
# The virtual memory API: physical chunks (by handle), the reservation, the
# mappings and a retained handle, each its own kind, with exact sizes.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/drv-vmm" >"$T/out" 2>"$T/err" || fail "drv-vmm failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump"
expect_eq "$(count '^alloc .* dev=0 api=cuMemCreate kind=vmm_phys .*bytes=2097152 result=0' "$T/dump")" 2 "cuMemCreate"
expect_eq "$(count '^alloc .* api=cuMemAddressReserve kind=vmm_reserve .*bytes=67108864 result=0' "$T/dump")" 1 "reservation"
expect_eq "$(count '^alloc .* api=cuMemMap kind=vmm_map .*bytes=2097152 result=0 .*offset=0' "$T/dump")" 2 "maps"
expect_eq "$(count '^alloc .* api=cuMemRetainAllocationHandle kind=vmm_retain ' "$T/dump")" 1 "retain"
expect_eq "$(count '^free .* api=cuMemRelease kind=vmm_phys ' "$T/dump")" 3 "releases"
expect_eq "$(count '^free .* api=cuMemUnmap kind=vmm_map .*bytes=2097152 ' "$T/dump")" 2 "unmaps"
expect_eq "$(count '^free .* api=cuMemAddressFree kind=vmm_reserve .*bytes=67108864 ' "$T/dump")" 1 "address free"
# Handles in the trace are the simulator's: each created handle is released.
for h in $(awk '$1 == "alloc" && $0 ~ /kind=vmm_phys/ { for (i = 2; i <= NF; i++) if ($i ~ /^addr=/) print substr($i, 6) }' "$T/dump"); do
	[ "$(count "^free .* kind=vmm_phys addr=$h " "$T/dump")" -ge 1 ] || fail "handle $h never released"
	grep -q "^alloc fn=cuMemCreate .*addr=$h " "$T/calls.log" || fail "handle $h not in the simulator log"
done
