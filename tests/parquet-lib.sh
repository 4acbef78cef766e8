# tests/parquet-lib.sh - sourced by tests/t90*-parquet-*.sh after lib.sh:
# the npm readers (DuckDB's @duckdb/node-api, hyparquet with its
# compressors) from build/npm, installed there by scripts/install-deps.sh
# (or here, once, when missing); the case skips when they cannot be had.
NPM=$B/npm
need_readers() {
	command -v node >/dev/null 2>&1 || skip "no node (the Parquet readers run on it)"
	if ! [ -d "$NPM/node_modules/@duckdb/node-api" ] || ! [ -d "$NPM/node_modules/hyparquet-compressors" ]; then
		sh "$ROOT/scripts/install-deps.sh" >/dev/null 2>&1
		[ -d "$NPM/node_modules/@duckdb/node-api" ] && [ -d "$NPM/node_modules/hyparquet-compressors" ] ||
			skip "cannot install @duckdb/node-api and hyparquet from npm (scripts/install-deps.sh)"
	fi
	# node resolves packages from the script's folder up
	cp "$ROOT/tests/tools/parquet-check.mjs" "$NPM/parquet-check.mjs" || fail "cannot copy the checker"
}
# duck SQL...: each statement's rows as JSON lines, from DuckDB
duck() {
	cat >"$NPM/duck-q.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const c = await (await DuckDBInstance.create(':memory:')).connect();
for (const q of process.argv.slice(2))
  for (const r of (await c.runAndReadAll(q)).getRowObjectsJson()) console.log(JSON.stringify(r));
JS
	node "$NPM/duck-q.mjs" "$@"
}
# check_export DIR TRACE... [-- RANKS]: the report's JSON and database of the
# traces, then parquet-check.mjs on DIR against them
check_export() {
	dir=$1; shift
	"$MEMTRACE" report --json --db "$dir.db" "$@" >"$dir.json" 2>"$dir.rep.err" ||
		fail "report failed: $(cat "$dir.rep.err")"
	sqlite3 -separator '	' "$dir.db" "SELECT ss.site, count(*), sum(a.bytes) FROM allocs a
	  JOIN site_stacks ss USING (trace, stack, device) WHERE a.kind IN (1, 2, 3, 5, 6, 10)
	  GROUP BY ss.site" >"$dir.sites" || fail "sqlite3 failed"
	node "$NPM/parquet-check.mjs" "$dir" "$dir.json" "$dir.sites" ${RANKS:-} >"$dir.check" 2>&1 ||
		fail "parquet-check $dir: $(tail -5 "$dir.check")"
}
