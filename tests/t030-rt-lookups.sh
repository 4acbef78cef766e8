#!/bin/sh
# The simulated runtime reaches the driver as the real one does
# (cuda-facts.md §1, t040): exactly one dlsym into libcuda, for
# cuGetProcAddress_v2, then look-ups through it at the real runtime's
# versions and flags, in its order; cudaGetDriverEntryPoint goes through
# the driver's cuGetProcAddress too.
. "$(dirname "$0")/lib.sh"

sim env SIMCUDA_LOOKUP_LOG=$T/lookups.log "$CLIENTS/rt-sim-lookups" >"$T/out" 2>&1 || {
	cat "$T/out"; fail "rt-sim-lookups failed"
}
cat "$T/out"
fail() { echo "FAIL: $*"; echo "--- look-up log:"; cat "$T/lookups.log"; exit 1; }

expect_eq "$(grep '^dlsym ' "$T/out")" "dlsym libcuda cuGetProcAddress_v2" "dlsym calls into libcuda"

# "lookup <name> <cudaVersion> <flags> <result> <variant>"
expect_eq "$(sed -n 1p "$T/lookups.log")" 'lookup "" 0 0 not_found -' "look-up 1"
expect_eq "$(sed -n 2p "$T/lookups.log")" "lookup cuInit 2000 0 found cuInit" "look-up 2"
expect_eq "$(sed -n 3p "$T/lookups.log")" "lookup cuGetProcAddress 11030 0 found cuGetProcAddress" "look-up 3"
expect_eq "$(sed -n 4p "$T/lookups.log")" "lookup cuGetProcAddress 12000 0 found cuGetProcAddress_v2" "look-up 4"
has() {
	grep -qx "lookup $1" "$T/lookups.log" || fail "no look-up 'lookup $1'"
}
has 'cuMemAlloc 3020 0 found cuMemAlloc_v2'
has 'cuMemFree 3020 0 found cuMemFree_v2'
has 'cuMemAllocPitch 3020 0 found cuMemAllocPitch_v2'
has 'cuMemGetInfo 3020 0 found cuMemGetInfo_v2'
has 'cuMemHostAlloc 2020 0 found cuMemHostAlloc'
has 'cuMemHostRegister 6050 0 found cuMemHostRegister_v2'
has 'cuCtxGetDevice 2000 0 found cuCtxGetDevice'
has 'cuCtxGetDevice 13000 0 found cuCtxGetDevice_v2'
has 'cuMemAllocAsync 11020 0 found cuMemAllocAsync'
has 'cuMemAllocAsync 11020 2 found cuMemAllocAsync_ptsz'
has 'cuMemFreeAsync 11020 0 found cuMemFreeAsync'
has 'cuMemFreeAsync 11020 2 found cuMemFreeAsync_ptsz'
has 'cuMemAllocFromPoolAsync 11020 0 found cuMemAllocFromPoolAsync'
has 'cuMemAllocFromPoolAsync 11020 2 found cuMemAllocFromPoolAsync_ptsz'
has 'cuStreamSynchronize 2000 0 found cuStreamSynchronize'
has 'cuStreamSynchronize 7000 2 found cuStreamSynchronize_ptsz'
has 'cuMemcpy 7000 2 found cuMemcpy_ptds'
has 'cuArrayCreate 3020 0 found cuArrayCreate_v2'
has 'cuIpcOpenMemHandle 11000 0 found cuIpcOpenMemHandle_v2'
expect_eq "$(grep -vc ' found ' "$T/lookups.log")" 1 "look-ups that found nothing (only the empty name)"
expect_eq "$(tail -n 1 "$T/lookups.log")" "lookup cuMemCreate 13000 0 found cuMemCreate" \
	"cudaGetDriverEntryPoint's look-up (the runtime's version, 13000)"

# With the real runtime at hand: every look-up of the simulated one's
# start-up (all but cudaGetDriverEntryPoint's) is one the real runtime
# makes, in the same order.
REAL=${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13
[ -e "$REAL" ] && [ -x "$CLIENTS/realrt-malloc" ] || exit 0
LD_LIBRARY_PATH=$B/simcuda/driver SIMCUDA_LOOKUP_LOG=$T/real.log "$CLIENTS/realrt-malloc" >/dev/null 2>&1
sed '$d' "$T/lookups.log" | cut -d' ' -f2-4 >"$T/ours"
cut -d' ' -f2-4 "$T/real.log" >"$T/real"
missing=$(awk 'NR == FNR { want[NR] = $0; n = NR; next }
	i < n && $0 == want[i + 1] { i++ }
	END { if (i < n) print want[i + 1] }' "$T/ours" "$T/real")
[ -z "$missing" ] || fail "look-up '$missing' is not the real runtime's next one (see $T/real.log)"
