#!/bin/sh
# t260-view-cli: `memtrace view` without a browser: its usage, where the
# page goes (FILE.html beside the first trace, or -o), that it loads
# nothing from elsewhere (no src or href to another file or site), and that
# its data is the report: the embedded report equals `memtrace report
# --json`, the timeline rows are the model's (rt-basic: 1 MiB, 3000 B and
# 64 MiB, all freed) and the address map holds each allocation with its
# lifetime and site; the framework's timeline is the database's.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

"$MEMTRACE" view --help >help || fail "view --help failed"
grep -q '^usage: memtrace view \[-o FILE.html\]' help || fail "usage: $(head -1 help)"
"$MEMTRACE" help 2>&1 | grep -q '^  *view  *write the run as one interactive HTML page' ||
	"$MEMTRACE" --help 2>&1 | grep -q 'view' || fail "view not in the command list"
"$MEMTRACE" view >out 2>err; rc=$?
expect_eq "$rc" 2 "exit status without FILE"
expect_eq "$(cat err)" "memtrace: no trace FILE given (try 'memtrace view --help')" "message without FILE"
"$MEMTRACE" view missing.bin >out 2>err; rc=$?
expect_eq "$rc" 2 "exit status of a missing file"

traced "$CLIENTS/rt-basic" >/dev/null 2>&1 || fail "rt-basic failed"
"$MEMTRACE" view trace.bin >out 2>err || fail "view failed: $(cat err)"
expect_eq "$(cat out)" "wrote trace.bin.html" "output line"
[ -s err ] && fail "view wrote to stderr: $(cat err)"
"$MEMTRACE" view -o page.html trace.bin >out 2>err || fail "view -o failed: $(cat err)"
cmp -s page.html trace.bin.html || fail "-o page differs from the default one"
"$MEMTRACE" report --json --no-db trace.bin >report.json || fail "report failed"

python3 - page.html report.json <<'PY' || fail "page content"
import json, re, sys
page, rep = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
# self-contained: no other file, no network
assert not re.search(r'<(script|link|img|iframe)[^>]*\s(src|href)=', page, re.I), "an external resource"
assert page.count("<script") == 3, "scripts: %d" % page.count("<script")
data = re.search(r'<script type="application/json" id="memtrace-data">(.*?)</script>', page, re.S).group(1)
assert "<" not in data
d = json.loads(data)
assert d["report"] == rep, "embedded report differs"
dev = d["devices"][0]
MiB = 1 << 20
# the model's timeline rows, from rt-basic's calls: 1 MiB, 3000 B, 64 MiB
# allocated, then the 3000 B, the 1 MiB and the 64 MiB freed (the last
# row: the end of the run)
res = [MiB, MiB + 3000, MiB + 3000 + 64 * MiB, MiB + 64 * MiB, 64 * MiB, 0, 0]
assert dev["timeline"]["reserved"] == res, dev["timeline"]
assert dev["timeline"]["allocated"] == res, dev["timeline"]
assert rep["devices"][0]["peak_reserved_bytes"] == max(res) == 68160440
assert sorted(s["bytes"] for s in dev["peak_sites"]) == [3000, MiB, 64 * MiB], dev["peak_sites"]
m = dev["address_map"]
assert m["shown"] == m["total"] == 3, m
boxes = sorted(m["boxes"], key=lambda b: b[4])
# [t0, t1, y_lo, y_hi, bytes, pid, site, live, address]
assert [b[4] for b in boxes] == [3000, MiB, 64 * MiB]
assert all(b[7] == 0 and b[0] < b[1] <= rep["duration_ns"] for b in boxes), "all freed"
assert all(b[3] - b[2] == b[4] for b in boxes), "box heights are the sizes"
assert all(b[6] > 0 for b in boxes), "every box has its site"
assert all(b[5] == rep["processes"][0]["pid"] for b in boxes)
assert sum(s["live_at_exit_bytes"] for s in d["sites"]) == 0
PY

# with framework records (t720's split scenario): the framework's timeline
# of the device of the run, row for row the database's fw_timeline; cached = reserved - allocated at each row
LD_LIBRARY_PATH=$SIM "$MEMTRACE" run --no-summary -o split.bin -- "$CLIENTS/dl-fwgen" split >/dev/null 2>&1 ||
	fail "dl-fwgen split failed"
"$MEMTRACE" view split.bin >/dev/null 2>err || fail "view of split.bin: $(cat err)"
"$MEMTRACE" report --db split.db split.bin >/dev/null 2>&1 || fail "report of split.bin"
sqlite3 split.db "SELECT time_ns, reserved, allocated FROM fw_timeline WHERE trace IS NULL ORDER BY time_ns" |
	tr '|' ' ' >fw.db.txt
python3 - split.bin.html <<'PY' >fw.page.txt || fail "framework data"
import json, re, sys
d = json.loads(re.search(r'id="memtrace-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
fw = d["framework"]["devices"]
assert len(fw) == 1 and fw[0]["device"] == 0 and fw[0]["gdev"] == 0, fw
tl = fw[0]["timeline"]
assert all(r - a == c for r, a, c in zip(tl["reserved"], tl["allocated"], tl["cached"])), tl
for row in zip(tl["t"], tl["reserved"], tl["allocated"]):
    print(*row)
PY
[ -s fw.db.txt ] || fail "no fw_timeline rows"
cmp -s fw.page.txt fw.db.txt || fail "framework timeline: page $(cat fw.page.txt), database $(cat fw.db.txt)"
expect_eq "$(tail -n 1 fw.page.txt | cut -d' ' -f2)" $((40 * 1048576)) "framework reserved at the end (dl-fwgen.c: 40 MiB)"
exit 0
