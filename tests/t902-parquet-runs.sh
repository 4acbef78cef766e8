#!/bin/sh
# The warehouse over several exports: a second run's partitions land beside
# the first's; exporting a run already there is refused (exit 1), leaving
# every file as it was and no temporary directory; a cut trace exports what
# the report loads, with the report's warnings; a column a later version
# adds (a file written by DuckDB with one more column) reads as null in the
# older exports, with DuckDB's union_by_name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/parquet-lib.sh"
need_readers
cd "$T" || exit 1
[ -x "$SAMPLES/leak" ] && [ -x "$SAMPLES/fragmentation" ] || skip "no samples (make tests-build)"
TRACE=leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
SIMCUDA_MEM=400M TRACE=frag.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"
"$MEMTRACE" export --format parquet -o wh leak.bin 2>err || fail "export leak: $(cat err)"
"$MEMTRACE" export --format parquet -o wh frag.bin 2>err || fail "export frag: $(cat err)"
expect_eq "$(ls wh/runs | wc -l)" 2 "runs beside each other"
expect_eq "$(ls wh/processes | wc -l)" 2 "processes partitions"
expect_eq "$(duck "SELECT count(*) AS n FROM read_parquet('wh/runs/**/*.parquet', hive_partitioning = true)")" \
	'{"n":"2"}' "rows of runs"
find wh -type f | sort | xargs md5sum >before
"$MEMTRACE" export --format parquet -o wh leak.bin >out 2>err && fail "the same run exported twice"
grep -q 'already holds run' err || fail "no message for a run already there: $(cat err)"
find wh -type f | sort | xargs md5sum >after
cmp -s before after || fail "a refused export changed the warehouse"
expect_eq "$(ls -a wh | grep -c memtrace-tmp)" 0 "temporary directories left"

# a cut trace: the report's warnings, and its figures
size=$(stat -c %s frag.bin)
head -c $((size - 70000)) frag.bin >cut.bin
"$MEMTRACE" report --no-db cut.bin >/dev/null 2>rep.err || fail "report of the cut trace failed"
grep -q warning rep.err || fail "the report did not warn about the cut trace: $(cat rep.err)"
"$MEMTRACE" export --format parquet -o wh2 cut.bin 2>exp.err || fail "export of the cut trace: $(cat exp.err)"
cmp -s rep.err exp.err || fail "warnings differ: report $(cat rep.err) / export $(cat exp.err)"
check_export wh2 cut.bin

# schema evolution: a later file with one more column
f=$(ls wh/processes/run_id=*/host=*/rank=*/part-1.parquet | head -1)
mkdir -p wh/processes/run_id=7/host=new/rank=0
duck "COPY (SELECT *, 42::BIGINT AS added_later FROM read_parquet('$f', hive_partitioning = false))
      TO 'wh/processes/run_id=7/host=new/rank=0/part-1.parquet' (FORMAT parquet)" >/dev/null ||
	fail "DuckDB cannot write the later file"
expect_eq "$(duck "SELECT count(*) AS n, count(added_later) AS later FROM
      read_parquet('wh/processes/**/*.parquet', hive_partitioning = true, union_by_name = true)
      WHERE run_id <> 7")" '{"n":"2","later":"0"}' "older exports read the new column as null"
expect_eq "$(duck "SELECT added_later FROM read_parquet('wh/processes/**/*.parquet',
      hive_partitioning = true, union_by_name = true) WHERE run_id = 7")" '{"added_later":"42"}' \
	"the later export's value"
exit 0
