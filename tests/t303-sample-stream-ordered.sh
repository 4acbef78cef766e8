#!/bin/sh
# t303-sample-stream-ordered: samples/stream-ordered.c with 32 MiB pool
# chunks: reserved against used after each step, as samples/README.md
# works out: 64/44 MiB, freed to 64/0, synchronized to 0; then with the
# release threshold at UINT64_MAX 96/72 MiB (the peak), kept at 96 by a
# synchronize, 0 after cudaMemPoolTrimTo.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/stream-ordered" ] || skip "no $SAMPLES/stream-ordered (make tests-build)"
MiB=1048576

SIMCUDA_POOL_CHUNK=32M traced "$SAMPLES/stream-ordered" >"$T/out" 2>"$T/err" ||
	fail "stream-ordered failed: $(cat "$T/err")"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
expect_eq "$(count '^alloc .* dev=0 api=cudaMallocAsync kind=async .* result=0 ' "$T/dump")" 8 "cudaMallocAsync"
expect_eq "$(count '^free .* api=cudaFreeAsync kind=async .* result=0 ' "$T/dump")" 8 "cudaFreeAsync"

# The pool's reserved and used bytes, in MiB, each time one changed.
awk -v M=$MiB '$1 == "pool" { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	print f["api"], f["reserved"] / M, f["used"] / M }' "$T/dump" >"$T/pool"
cat >"$T/pool.want" <<'WANT'
cudaMallocAsync 32 8
cudaMallocAsync 32 16
cudaMallocAsync 32 24
cudaMallocAsync 32 32
cudaMallocAsync 64 44
cudaStreamSynchronize 0 0
cudaMallocAsync 32 24
cudaMallocAsync 64 48
cudaMallocAsync 96 72
cudaStreamSynchronize 96 0
cudaMemPoolTrimTo 0 0
WANT
diff -u "$T/pool.want" "$T/pool" || fail "pool reserved/used sequence differs from samples/README.md"

# The program reads the same figures from the pool.
cat >"$T/out.want" <<'WANT'
stream-ordered: part 1, release threshold 0 (CUDA's default)
  after 4 x 8 MiB:                   reserved  32 MiB, used  32 MiB
  after 12 MiB more:                 reserved  64 MiB, used  44 MiB
  after freeing them all:            reserved  64 MiB, used   0 MiB
  after cudaStreamSynchronize:       reserved   0 MiB, used   0 MiB
stream-ordered: part 2, release threshold UINT64_MAX (as PyTorch sets it)
  after 3 x 24 MiB:                  reserved  96 MiB, used  72 MiB
  after the frees and a synchronize: reserved  96 MiB, used   0 MiB
  after cudaMemPoolTrimTo(pool, 0):  reserved   0 MiB, used   0 MiB
WANT
diff -u "$T/out.want" "$T/out" || fail "program output differs"

# --- the same figures in `memtrace report --json` (read with python3) ----
command -v python3 >/dev/null 2>&1 || { echo "no python3: the report's figures are not checked"; exit 0; }
"$MEMTRACE" report --no-db --json "$T/trace.bin" >"$T/report.json" 2>"$T/report.err" ||
	fail "report failed: $(cat "$T/report.err")"
# rj EXPR: EXPR in python, with r the report and d its devices by index
rj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); d = {x["device"]: x for x in r["devices"]}
print(eval(sys.argv[2]))' "$T/report.json" "$1"
}
# DEV_FIGS: the figures of device 0 this test checks, in this order (not
# device_used_bytes_at_peak: a sample of cuMemGetInfo, taken when the
# recorder samples, not at the peak; what is untraced is exact here)
DEV_FIGS='" ".join(str(d[0][k]) for k in ("peak_reserved_bytes", "peak_allocated_bytes", "cached_bytes_at_peak", "left_at_exit_bytes", "untraced_bytes_at_peak"))'
expect_eq "$(rj '"%d %d %s" % (r["events"]["total"], r["events"]["failed"], sorted(r["events"]["by_api"].items()))')" \
	"16 0 [('cudaFreeAsync', 8), ('cudaMallocAsync', 8)]" "report: events"
expect_eq "$(rj "$DEV_FIGS")" "$((96 * MiB)) $((72 * MiB)) $((24 * MiB)) 0 $((300 * MiB))" \
	"report: peak reserved, allocated, cached, live at exit, untraced"
expect_eq "$(rj 'r["leaks"]')" "[]" "report: leak candidates"
