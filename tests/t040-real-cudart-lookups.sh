#!/bin/sh
# The real libcudart.so.13 over the simulated driver (cuda-facts.md §1):
# one dlsym into libcuda, for cuGetProcAddress_v2; everything else through
# it, starting with "" at version 0, cuGetProcAddress at 11030 and 12000,
# cuMemAlloc and cuMemFree at 3020 (the _v2 variants), stream-ordered
# functions with flags 0 and again with flag 2 (the _ptsz variants). The
# simulated runtime imitates this (t030). cudaMalloc itself fails: the real
# runtime needs the driver's private export tables.
. "$(dirname "$0")/lib.sh"

REAL=${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13
[ -e "$REAL" ] || skip "no real runtime at $REAL"
[ -x "$CLIENTS/realrt-malloc" ] || fail "$CLIENTS/realrt-malloc not built"

LD_LIBRARY_PATH=$B/simcuda/driver SIMCUDA_LOOKUP_LOG=$T/lookups.log \
	"$CLIENTS/realrt-malloc" >"$T/out" 2>&1
cat "$T/out"

fail() { echo "FAIL: $*"; echo "--- look-up log:"; cat "$T/lookups.log"; exit 1; }

[ -s "$T/lookups.log" ] || fail "the real runtime looked nothing up"
expect_eq "$(grep -c '^dlsym libcuda ' "$T/out")" 1 "dlsym calls into libcuda"
grep -qx 'dlsym libcuda cuGetProcAddress_v2' "$T/out" || fail "the one dlsym is not for cuGetProcAddress_v2"

# "lookup <name> <cudaVersion> <flags> <result> <variant>", the empty name
# written "".
expect_eq "$(head -n 1 "$T/lookups.log" | cut -d' ' -f1-4)" 'lookup "" 0 0' "first look-up"
has() {
	grep -qx "lookup $1" "$T/lookups.log" || fail "no look-up 'lookup $1'"
}
has 'cuGetProcAddress 11030 0 found cuGetProcAddress'
has 'cuGetProcAddress 12000 0 found cuGetProcAddress_v2'
has 'cuMemAlloc 3020 0 found cuMemAlloc_v2'
has 'cuMemFree 3020 0 found cuMemFree_v2'
has 'cuMemAllocAsync 11020 0 found cuMemAllocAsync'
has 'cuMemAllocAsync 11020 2 found cuMemAllocAsync_ptsz'
has 'cuMemFreeAsync 11020 0 found cuMemFreeAsync'
has 'cuMemFreeAsync 11020 2 found cuMemFreeAsync_ptsz'
has 'cuMemAllocFromPoolAsync 11020 2 found cuMemAllocFromPoolAsync_ptsz'
has 'cuMemHostAlloc 2020 0 found cuMemHostAlloc'
has 'cuCtxGetDevice 2000 0 found cuCtxGetDevice'
has 'cuStreamSynchronize 7000 2 found cuStreamSynchronize_ptsz'

# cuInit is the second look-up.
expect_eq "$(sed -n 2p "$T/lookups.log" | cut -d' ' -f2-4)" "cuInit 2000 0" "second look-up"
grep -q '^cudaMalloc: ' "$T/out" || fail "the client did not get past cudaMalloc"
