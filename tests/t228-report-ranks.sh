#!/bin/sh
# Many ranks: 16 traces from bench/gen-ranks (2 hosts of 4 devices, each
# host's clocks offset) merged in one report give each rank the same peak,
# failed calls and events as a report of that trace alone, and as the
# generator computed while writing it. With more than 8 processes the
# report shows a ranks table (host, device, rank, pid, peak, failed) in
# that order, flags the one highest peak (rank 11, which took a 6 GiB
# block), the failed ranks (5 and 12, one failed cudaMalloc of 80 GiB each)
# and the killed one (12, no exit record), and prints full sections only
# for the 3 highest peaks and the flagged ranks; the JSON has the same rows.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
GEN=$B/bench/gen-ranks
[ -x "$GEN" ] || fail "build first: $GEN"
mkdir r && "$GEN" r 16 2000 2 4 >expect || fail "gen-ranks failed"
expect_eq "$(ls r/*.bin | wc -l)" 16 "traces written"
# the generator's own figures for the outliers, fixed here
expect_eq "$(sed -n '12p' expect)" "11 node01 3 11678908416 0 2000" "rank 11: the highest peak"
expect_eq "$(sed -n '6p;13p' expect | tr '\n' ' ')" \
	"5 node00 1 5457379328 1 2001 12 node01 0 5638717440 1 2001 " "ranks 5 and 12: one failure each"

"$MEMTRACE" report --no-db --json r/*.bin >all.json 2>err || fail "merged report failed: $(cat err)"
"$MEMTRACE" report --no-db r/*.bin >all.txt 2>err || fail "merged text report failed: $(cat err)"
for f in r/*.bin; do
	"$MEMTRACE" report --no-db --json "$f" >"$f.json" 2>err || fail "report of $f failed: $(cat err)"
done

# rank host device peak failures events, from the merge, each trace alone,
# and the JSON's ranks table (sorted by rank here)
python3 - >merged <<'EOF'
import json
r = json.load(open("all.json"))
for p in sorted(r["processes"], key=lambda p: p["rank"]):
    d = p["devices"]
    print(p["rank"], p["hostname"], d[0]["device"] if len(d) == 1 else "many",
          p["peak_reserved_bytes"], p["failed"], p["events"])
EOF
python3 - >alone <<'EOF'
import json, glob
for f in sorted(glob.glob("r/*.bin.json")):
    p = json.load(open(f))["processes"][0]
    print(p["rank"], p["hostname"], p["devices"][0]["device"], p["peak_reserved_bytes"],
          p["failed"], p["events"])
EOF
python3 - >table <<'EOF'
import json
t = json.load(open("all.json"))["ranks"]["table"]
for k in sorted(t, key=lambda k: k["rank"]):
    print(k["rank"], k["hostname"], k["device"], k["peak_reserved_bytes"], k["failed"])
EOF
expect_eq "$(cat merged)" "$(cat expect)" "merged report: each rank's figures as generated"
expect_eq "$(cat alone)" "$(cat expect)" "each trace alone: the same figures"
expect_eq "$(cat table)" "$(cut -d' ' -f1-5 expect)" "JSON ranks table: the same figures"

# the text table: in host, device, rank order, the flags on their rows
expect_eq "$(sed -n '/^  host  *dev  *rank  *pid  *peak  *failed$/,/^events by API/p' all.txt |
	sed '1d;$d' | awk '{ print $3 }' | tr '\n' ' ')" \
	"0 4 1 5 2 6 3 7 8 12 9 13 10 14 11 15 " "table rows by host, device, rank"
expect_eq "$(grep -c '  highest peak$' all.txt)" 1 "one highest peak flagged"
expect_eq "$(grep '  highest peak$' all.txt | awk '{ print $1, $2, $3, $4, $5, $6 }')" \
	"node01 3 11 1011 10.9 GiB" "the highest peak's row"
expect_eq "$(grep 'FAILED' all.txt | awk '{ print $3, $7, $8, $9 }' | tr '\n' ' ')" \
	"5 1 FAILED  12 1 FAILED KILLED " "failed and killed rows"
expect_eq "$(grep '^  highest peak: ' all.txt)" \
	"  highest peak: rank 11 (pid 1011) on node01 dev 3, 10.9 GiB (the median process 5.07 GiB)" \
	"the outlier line"
expect_eq "$(grep '^  failed calls' all.txt)" \
	"  failed calls (2): rank 5 (pid 1005) on node00 dev 1, 1 failed; rank 12 (pid 1012) on node01 dev 0, 1 failed" \
	"the failed ranks line"
expect_eq "$(grep '^  killed or crashed' all.txt)" \
	"  killed or crashed (1): rank 12 (pid 1012) on node01 dev 0" "the killed rank"
# full sections: 11, 12, 13 (highest peaks) and 5 (failed)
expect_eq "$(grep '^process [0-9]*: peak' all.txt | cut -d: -f1 | tr '\n' ' ')" \
	"process 1005 process 1011 process 1012 process 1013 " "full sections"
expect_eq "$(grep -c '^  pid ' all.txt)" 4 "process lines only for the full sections"
python3 - >flags <<'EOF'
import json
r = json.load(open("all.json"))["ranks"]
print(r["highest_peak_pid"], r["highest_peak_processes"], r["median_peak_reserved_bytes"])
for k in r["table"]:
    if k["flags"] or k["full_section"]:
        print(k["rank"], ",".join(k["flags"]), k["full_section"])
EOF
expect_eq "$(cat flags)" "1011 1 5444206592
5 failed True
12 failed,killed True
13  True
11 highest_peak True" "JSON: the same flags and full sections"

# 300 ranks of 20 events: more stacks (one "no stack" per process) than the
# symbol cache's first table holds; a site kept a pointer into that table
# when it grew (the report crashed)
mkdir r300 && "$GEN" r300 300 20 4 8 >expect300 || fail "gen-ranks 300 failed"
"$MEMTRACE" report --no-db r300/*.bin >r300.txt 2>err || fail "report of 300 ranks failed ($?): $(cat err)"
expect_eq "$(sed -n 1p r300.txt)" "$(printf 'memtrace report: 300 processes, %s, 6002 events (2 failed)' \
	"$(sed -n '1s/.*processes, \([^,]*\),.*/\1/p' r300.txt)")" "300 ranks: the first line"
expect_eq "$(grep -c '^  node0[0-3] ' r300.txt)" 300 "300 ranks: a row each"

# the database's load of the merge gives the same text, bar its path line
"$MEMTRACE" report --db all.db r/*.bin >db.txt 2>err || fail "report with a database failed: $(cat err)"
expect_eq "$(grep -v 'all.db' db.txt)" "$(cat all.txt)" "with a database: the same report"
exit 0
