#!/bin/sh
# `memtrace export --format parquet`, read by real engines: DuckDB (through
# @duckdb/node-api) reads every table of an export of each sample of `make
# demo` (leak, fragmentation with its two failed cudaMallocs, activations,
# stream-ordered, pinned-expandable, multiprocess: two traces of
# one run) and of a 64-rank run of bench/gen-ranks; every query of
# docs/warehouse.md runs, and its answers equal the report's: peak per rank
# = its processes and ranks table, allocations per site = its database,
# failures = its list, run_devices = its devices. hyparquet, a second and
# independent reader, reads every file and finds the same rows
# (tests/tools/parquet-check.mjs).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/parquet-lib.sh"
need_readers
cd "$T" || exit 1
for s in leak fragmentation activations stream-ordered pinned-expandable multiprocess; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
[ -x "$B/bench/gen-ranks" ] || skip "no $B/bench/gen-ranks (make tests-build)"

export SIMCUDA_DEVICES=2
for s in leak activations stream-ordered pinned-expandable; do
	TRACE=$s.bin traced "$SAMPLES/$s" >out 2>err || fail "$s failed: $(cat err)"
done
SIMCUDA_MEM=400M TRACE=fragmentation.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"
mkdir mp && TRACE=mp/trace.bin traced "$SAMPLES/multiprocess" 2 >out 2>err ||
	fail "multiprocess failed: $(cat err)"
expect_eq "$(ls mp | wc -l)" 2 "traces of multiprocess (launcher and workers)"

for s in leak activations stream-ordered pinned-expandable fragmentation; do
	"$MEMTRACE" export --format parquet -o "wh-$s" "$s.bin" >out 2>err ||
		fail "export $s failed: $(cat err)"
	[ -s err ] && fail "export $s wrote to stderr: $(cat err)"
	[ -s out ] && fail "export $s wrote to stdout: $(cat out)"
	check_export "wh-$s" "$s.bin"
done
"$MEMTRACE" export --format parquet -o wh-mp mp/*.bin 2>err || fail "export mp failed: $(cat err)"
check_export wh-mp mp/*.bin
grep -q 'ok query failures = report failures' wh-fragmentation.check || fail "no failures check"
expect_eq "$(duck "SELECT count(*) AS n FROM 'wh-fragmentation/failures/**/*.parquet'")" '{"n":"2"}' \
	"failures of fragmentation"
expect_eq "$(duck "SELECT count(*) AS n FROM read_parquet('wh-mp/processes/**/*.parquet')")" '{"n":"2"}' \
	"processes of multiprocess"
# types: times, sizes, strings, lists as their logical types
duck "SELECT name, logical_type, converted_type FROM parquet_schema('wh-leak/failures/*/*/*/*.parquet')" >schema
grep -q '"name":"time","logical_type":"TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=<null>, MICROS=<null>, NANOS=NanoSeconds()))"' schema ||
	fail "failures.time is not TIMESTAMP(NANOS, UTC): $(grep time schema)"
grep -q '"name":"frames","logical_type":"ListType()","converted_type":"LIST"' schema || fail "frames is not a LIST"
grep -q '"name":"api","logical_type":"StringType()","converted_type":"UTF8"' schema || fail "api is not a STRING"
duck "SELECT DISTINCT compression, encodings FROM parquet_metadata('wh-leak/allocations/*/*/*/*.parquet') ORDER BY ALL" >meta
grep -q '"compression":"ZSTD","encodings":"PLAIN, RLE, RLE_DICTIONARY"' meta || fail "no dictionary strings: $(cat meta)"

# 64 ranks on 4 hosts of 8 devices, 2000 events each
mkdir ranks && "$B/bench/gen-ranks" ranks 64 2000 4 8 >ranks.expect || fail "gen-ranks failed"
"$MEMTRACE" export --format parquet -o wh-64 ranks/*.bin 2>err || fail "export 64 failed: $(cat err)"
RANKS=64 check_export wh-64 ranks/*.bin
expect_eq "$(ls -d wh-64/allocations/run_id=*/host=*/rank=* | wc -l)" 64 "rank partitions"
# the figures gen-ranks says each rank must have
duck "SELECT rank::INT AS rank, host, peak_reserved_bytes AS peak, failed FROM
      read_parquet('wh-64/processes/**/*.parquet', hive_partitioning = true) ORDER BY 1" |
	sed 's/[{}"]//g' >got
awk '{ printf "rank:%s,host:%s,peak:%s,failed:%s\n", $1, $2, $4, $5 }' ranks.expect | sort -t: -k2 -n >want
sort -t: -k2 -n got >got.s
cmp -s got.s want || fail "64 ranks: parquet and gen-ranks differ: $(diff got.s want | head -5)"
exit 0
