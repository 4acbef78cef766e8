// tests/tools/parquet-check.mjs - checks an export of `memtrace export
// --format parquet` with two independent readers (tests/t90*-parquet-*.sh):
//   node parquet-check.mjs DIR REPORT.json SITES.tsv [RANKS]
// DuckDB (@duckdb/node-api) reads every table under DIR, runs every query
// of docs/warehouse.md (the views it gives, the run's id for 42) and checks
// the answers against the report's JSON (peak per rank: its processes and,
// with RANKS, its ranks table; failures: its list) and against the database
// (SITES.tsv: "site<TAB>allocs<TAB>bytes" from allocs joined to
// site_stacks); hyparquet reads every file and must find the same rows.
// Prints one line per check; exits 1 on the first mismatch.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects, asyncBufferFromFile } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const [dir, jsonPath, sitesPath, ranksArg] = process.argv.slice(2);
const root = new URL('../..', import.meta.url).pathname;
const report = JSON.parse(readFileSync(jsonPath, 'utf8'));
const die = (m) => { console.log('FAIL: ' + m); process.exit(1); };
const eq = (a, b, what) => {
  const x = JSON.stringify(a), y = JSON.stringify(b);
  if (x !== y) die(`${what}:\n  parquet ${x.slice(0, 600)}\n  report  ${y.slice(0, 600)}`);
  console.log(`ok ${what}`);
};
const big = (v) => (typeof v === 'bigint' ? Number(v) : v);

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const rows = async (q) => (await c.runAndReadAll(q)).getRowObjects().map((r) => {
  const o = {};
  for (const k in r) o[k] = big(r[k]);
  return o;
});

// every table, through DuckDB
const tables = readdirSync(dir).filter((t) => !t.startsWith('.') && statSync(join(dir, t)).isDirectory());
const counts = {};
for (const t of tables) {
  const n = await rows(`SELECT count(*) AS n FROM read_parquet('${dir}/${t}/**/*.parquet', hive_partitioning = true, union_by_name = true)`);
  counts[t] = n[0].n;
  console.log(`ok duckdb reads ${t}: ${counts[t]} rows`);
}
for (const t of ['runs', 'processes', 'devices', 'allocations', 'failures', 'sites', 'stacks', 'timeline', 'run_devices', 'run_timeline'])
  if (!(t in counts)) die(`no table ${t}`);

// the views and queries of docs/warehouse.md
const doc = readFileSync(join(root, 'docs/warehouse.md'), 'utf8');
const views = [...doc.matchAll(/^CREATE VIEW .*$/gm)].map((m) => m[0]);
if (views.length < 6) die('docs/warehouse.md: the CREATE VIEW lines are missing');
for (const v of views) await c.run(v.replaceAll('warehouse/memtrace', dir));
// the newest run (ids are 63-bit: kept as text, not as a JS number)
const run = (await rows('SELECT run_id::VARCHAR AS r FROM runs ORDER BY exported_at DESC LIMIT 1'))[0].r;
const queries = {};
for (const m of doc.matchAll(/<!-- query (\w+) -->\n```sql\n([\s\S]*?)```\n<!-- end query -->/g))
  queries[m[1]] = m[2].replaceAll('run_id = 42', `run_id = ${run}`);
for (const q of ['ranks', 'site_allocs', 'fleet_sites', 'failures', 'first_failure', 'peak_trend', 'rank_timeline'])
  if (!queries[q]) die(`docs/warehouse.md has no query ${q}`);
const ans = {};
for (const [k, q] of Object.entries(queries)) {
  ans[k] = await rows(q);
  console.log(`ok query ${k} runs: ${ans[k].length} rows`);
}

// peak per rank = the report's processes (and its ranks table)
const byPid = (a, b) => a.pid - b.pid;
eq(ans.ranks.map((r) => ({ pid: r.pid, peak: r.peak_reserved_bytes, t: r.peak_t_ns, failed: r.failed, ended: r.ended })).sort(byPid),
   report.processes.map((p) => ({ pid: p.pid, peak: p.peak_reserved_bytes, t: p.peak_reserved_time_ns, failed: p.failed, ended: p.ended })).sort(byPid),
   'query ranks = report processes[] peak, time, failed, ended');
if (ranksArg) {
  if (!report.ranks) die('the report has no ranks table');
  eq(ans.ranks.map((r) => ({ pid: r.pid, host: r.host, peak: r.peak_reserved_bytes, failed: r.failed })).sort(byPid),
     report.ranks.table.map((r) => ({ pid: r.pid, host: r.hostname, peak: r.peak_reserved_bytes, failed: r.failed })).sort(byPid),
     'query ranks = report ranks table');
  eq(ans.ranks.length, Number(ranksArg), 'ranks');
}
// allocations per site = the database
const dbSites = readFileSync(sitesPath, 'utf8').trim().split('\n').filter(Boolean)
  .map((l) => l.split('\t').map(Number)).map(([site, allocs, bytes]) => ({ site, allocs, bytes }))
  .sort((a, b) => a.site - b.site);
eq(ans.site_allocs.map((r) => ({ site: r.site_id, allocs: r.allocs, bytes: r.bytes })).sort((a, b) => a.site - b.site),
   dbSites, 'query site_allocs = database allocs per site');
// failures = the report's list
const fkey = (a, b) => a.t - b.t || a.pid - b.pid;
eq(ans.failures.map((f) => ({ t: f.t_ns, pid: f.pid, api: f.api, dev: f.device, bytes: f.requested_bytes, err: f.error_name })).sort(fkey),
   report.failures.map((f) => ({ t: f.time_ns, pid: f.pid, api: f.api, dev: f.device, bytes: f.requested_bytes, err: f.error_name })).sort(fkey),
   'query failures = report failures');
// the run's devices = the report's devices
const dk = (a, b) => (a.host < b.host ? -1 : a.host > b.host) || a.dev - b.dev;
const rd = await rows('SELECT host, device, peak_reserved_bytes, left_at_exit_bytes FROM read_parquet(\'' + dir + '/run_devices/run_id=' + run + '/*.parquet\')');
eq(rd.map((d) => ({ host: d.host, dev: d.device, peak: d.peak_reserved_bytes, exit: d.left_at_exit_bytes })).sort(dk),
   report.devices.map((d) => ({ host: d.host ?? d.hostname ?? rd.find((x) => x.device === d.device)?.host, dev: d.device, peak: d.peak_reserved_bytes, exit: d.left_at_exit_bytes })).sort(dk),
   'run_devices = report devices');

// hyparquet reads every file, the same rows as DuckDB
const files = [];
const walk = (d) => { for (const e of readdirSync(d)) { const p = join(d, e); if (statSync(p).isDirectory()) walk(p); else if (p.endsWith('.parquet')) files.push(p); } };
walk(dir);
const hcount = {};
for (const f of files) {
  const t = f.slice(dir.length + 1).split('/')[0];
  const file = await asyncBufferFromFile(f);
  const r = await parquetReadObjects({ file, compressors });
  hcount[t] = (hcount[t] || 0) + r.length;
  if (t === 'processes') {
    const d = await rows(`SELECT * EXCLUDE (start_wall) FROM read_parquet('${f}', hive_partitioning = false)`);
    for (const k of ['pid', 'hostname', 'command', 'exe', 'trace_path', 'peak_reserved_bytes'])
      if (String(big(r[0][k])) !== String(d[0][k])) die(`hyparquet and duckdb differ on ${f} ${k}: ${r[0][k]} / ${d[0][k]}`);
  }
}
for (const t of tables) if ((hcount[t] || 0) !== counts[t]) die(`hyparquet read ${hcount[t]} rows of ${t}, duckdb ${counts[t]}`);
console.log(`ok hyparquet reads ${files.length} files, the same rows`);
