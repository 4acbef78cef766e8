#!/bin/sh
# Hostile strings survive into Parquet and back: t401's client, run from a
# file named q"b\s<newline>x<0xff>y with argv[0] = we"ird\0<newline><0xff>
# <tab>, an argument with a blank, an empty one, a valid UTF-8 one and a
# control byte. Its command line and exe read back from the processes table,
# by DuckDB and by hyparquet, equal the report's JSON (a byte that is not
# UTF-8 as the code point of its value, U+00FF), and the frames of its
# stacks are the report's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/parquet-lib.sh"
need_readers
name=$(printf 'q"b\\s\nx\377y')
cp "$CLIENTS/rt-rob-argv" "$T/$name" || fail "cannot copy the client"
cd "$T" || exit 1
sim "$MEMTRACE" run -o trace.bin -- "./$name" reexec >out 2>err || fail "run failed: $(cat err)"
"$MEMTRACE" report --json --no-db trace.bin >json 2>err || fail "report failed: $(cat err)"
"$MEMTRACE" export --format parquet -o wh trace.bin 2>err || fail "export failed: $(cat err)"
f=$(ls wh/processes/run_id=*/host=*/rank=*/part-1.parquet) || fail "no processes file"
cat >"$NPM/t901.mjs" <<'JS'
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects, asyncBufferFromFile } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
const [file, json] = process.argv.slice(2);
const p = JSON.parse(readFileSync(json, 'utf8')).processes[0];
const c = await (await DuckDBInstance.create(':memory:')).connect();
const d = (await c.runAndReadAll(`SELECT command, exe, trace_path FROM '${file}'`)).getRowObjects()[0];
const h = (await parquetReadObjects({ file: await asyncBufferFromFile(file), compressors }))[0];
let bad = 0;
for (const [k, want] of [['command', p.command], ['exe', p.exe], ['trace_path', p.trace]])
  for (const [who, got] of [['duckdb', d[k]], ['hyparquet', h[k]]])
    if (got !== want) { console.log(`FAIL: ${who} ${k}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`); bad = 1; }
if (!p.command.includes('\u00ff') || !p.exe.includes('\n')) { console.log('FAIL: not hostile'); bad = 1; }
console.log(bad ? 'differ' : 'same');
process.exit(bad);
JS
expect_eq "$(node "$NPM/t901.mjs" "$PWD/$f" "$PWD/json")" same "strings read back"
# the stacks' frames: the report's, by DuckDB
duck "SELECT list_sort(list(DISTINCT f)) AS v FROM (SELECT unnest(frames) AS f FROM 'wh/stacks/**/*.parquet')" >frames
grep -q 'main' frames || fail "no frames: $(cat frames)"
exit 0
