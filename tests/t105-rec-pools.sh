#!/bin/sh
# Stream-ordered allocations: the allocations themselves (kind async, with
# stream and pool) and the pool's reserved memory, sampled after each call
# that can change it: 32 MiB when the first chunk is taken, 0 after the
# synchronize; a created pool keeps 40 MiB under its 64 MiB threshold until
# cudaMemPoolTrimTo.
. "$(dirname "$0")/lib.sh"

SIMCUDA_POOL_CHUNK=32M traced "$CLIENTS/rt-pools" >"$T/out" 2>"$T/err" || fail "rt-pools failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump"
expect_eq "$(count '^alloc .* dev=0 api=cudaMallocAsync kind=async .*bytes=4194304 result=0 .*stream=0x[0-9a-f]+ pool=0x[1-9a-f]' "$T/dump")" 3 "cudaMallocAsync with stream and pool"
expect_eq "$(count '^alloc .* api=cudaMallocAsync_ptsz kind=async .*bytes=1048576 ' "$T/dump")" 1 "cudaMallocAsync_ptsz"
expect_eq "$(count '^alloc .* api=cudaMallocFromPoolAsync kind=async .*bytes=41943040 ' "$T/dump")" 1 "cudaMallocFromPoolAsync"
expect_eq "$(count '^free .* api=cudaFreeAsync ' "$T/dump")" 4 "cudaFreeAsync"
expect_eq "$(count '^alloc .* api=cudaMemPoolCreate kind=pool ' "$T/dump")" 1 "pool creation"
expect_eq "$(count '^free .* api=cudaMemPoolDestroy kind=pool ' "$T/dump")" 1 "pool destruction"

# The reserved sizes the pool records went through, in order: a record is
# written when reserved or used changed (the synchronize after freeing the
# created pool's block changes used, not reserved, which the threshold keeps).
awk '$1 == "pool" { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }; print f["api"], f["reserved"] }' \
	"$T/dump" >"$T/pool"
cat >"$T/pool.want" <<WANT
cudaMallocAsync 33554432
cudaMallocAsync 33554432
cudaMallocAsync 33554432
cudaStreamSynchronize 0
cudaMallocAsync_ptsz 33554432
cudaStreamSynchronize 0
cudaMallocFromPoolAsync 41943040
cudaStreamSynchronize 41943040
cudaMemPoolTrimTo 0
WANT
diff -u "$T/pool.want" "$T/pool" || fail "pool reserved sequence differs"
