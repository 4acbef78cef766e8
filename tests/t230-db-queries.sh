#!/bin/sh
# t230-db-queries: the three questions docs/schema.md answers in SQL (which
# sites leak, what was live at each device's peak, reserved over time), run
# as that page prints them (taken from between its "query" markers) on the
# database of real traces: the leak sample, and the leak and activations
# samples run one after the other (two processes, one report). Every row
# equals what `memtrace report --json` says, and the figures worked out in
# samples/README.md; README.md shows the same three queries; every stack an
# event used has its frames in stack_frames (it held only the stacks the
# report printed).
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/activations" ] || skip "no $SAMPLES (make tests-build)"
command -v sqlite3 >/dev/null 2>&1 || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
cd "$T" || exit 1
MiB=1048576
DOC=$ROOT/docs/schema.md

# query NAME: the SQL of docs/schema.md between "<!-- query NAME -->" and
# "<!-- end query -->", without the code fence
query() {
	awk -v n="$1" '$0 == "<!-- query " n " -->" { f = 1; next }
		$0 == "<!-- end query -->" { f = 0 } f && !/^```/' "$DOC"
}
for n in leaks peak timeline; do
	[ -n "$(query $n)" ] || fail "docs/schema.md has no query '$n'"
	# README.md's recipe holds the same text (blanks aside)
	q=$(query $n | tr -s ' \t\n' '   ')
	tr -s ' \t\n' '   ' <"$ROOT/README.md" | grep -qF "$q" || fail "README.md lacks the '$n' query of docs/schema.md"
done

# Row for row against the JSON: check.py JSON LEAKS PEAK TIMELINE (each the
# query's rows in sqlite3's -json mode); prints nothing and exits 0, or one
# line per difference and exits 1.
cat >check.py <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
def rows(p):
    s = open(p).read().strip()
    return json.loads(s) if s else []
leaks, peak, tl = rows(sys.argv[2]), rows(sys.argv[3]), rows(sys.argv[4])
bad = []
def main_frame(e):
    f = [x for x in e["frames"] if x["user"]] or e["frames"]
    return (f[0]["function"], f[0]["file"], f[0]["line"] or None) if f else (None, None, None)
def dev(d):
    return "host" if d == -1 else d

# leak candidates: the JSON's list is the query's first 10 rows
want = [(e["site"], e["device"], e["bytes"], e["count"], e["reasons"]) + main_frame(e) for e in r["leaks"]]
got = [(x["site"], dev(x["device"]), x["bytes"], x["count"],
        ["live_at_exit"] * x["leak_at_exit"] + ["growing"] * x["leak_growing"],
        x["function"], x["file"], x["line"]) for x in leaks]
if got[:10] != want:
    bad.append("leaks: query %s, JSON %s" % (got[:10], want))

# at each device's peak: the peak, then the JSON's top sites
devs = {(d["hostname"], d["device"]): d for d in r["devices"]}
by = {}
for x in peak:
    by.setdefault((x["host"], x["device"]), []).append(x)
for k, d in devs.items():
    xs = by.get(k, [])
    if d["peak_reserved_bytes"] and not xs:
        bad.append("peak %s: no rows" % (k,))
    for x in xs:
        if (x["time_ns"], x["reserved"], x["allocated"]) != \
           (d["peak_reserved_time_ns"], d["peak_reserved_bytes"], d["peak_allocated_bytes"]):
            bad.append("peak %s: query %s, JSON %s" % (k, (x["time_ns"], x["reserved"], x["allocated"]),
                       (d["peak_reserved_time_ns"], d["peak_reserved_bytes"], d["peak_allocated_bytes"])))
            break
    want = [(e["site"], e["bytes"], e["count"]) + main_frame(e) for e in d["peak_sites"]]
    got = [(x["site"], x["bytes"], x["count"], x["function"], x["file"], x["line"]) for x in xs]
    if got[:10] != want or len(want) != min(len(got), 10):
        bad.append("sites at the peak of %s: query %s, JSON %s" % (k, got, want))
for k in by:
    if k not in devs:
        bad.append("peak: rows of %s, a device the JSON does not have" % (k,))

# reserved over time: its maximum is the peak, the row at the peak's time
# (or last before it) holds the peak, the last row, at the end of the run,
# what was live then
tls = {}
for x in tl:
    tls.setdefault((x["host"], x["device"]), []).append(x)
for k, d in devs.items():
    xs = tls.get(k, [])
    if not xs:
        bad.append("timeline %s: no rows" % (k,))
        continue
    at = [x for x in xs if x["time_ns"] <= d["peak_reserved_time_ns"]]
    figs = (max(x["reserved"] for x in xs), at[-1]["reserved"] if at else None,
            at[-1]["allocated"] if at else None, xs[-1]["time_ns"], xs[-1]["reserved"])
    want = (d["peak_reserved_bytes"], d["peak_reserved_bytes"], d["peak_allocated_bytes"], r["duration_ns"],
            d["live_at_end_bytes"])
    if figs != want:
        bad.append("timeline %s: max, reserved and allocated at the peak, time and reserved of the last row:"
                   " %s, JSON %s" % (k, figs, want))
for k in tls:
    if k not in devs:
        bad.append("timeline: rows of %s, a device the JSON does not have" % (k,))
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# answer DB JSON: runs the three queries on DB and checks them against JSON
answer() {
	for n in leaks peak timeline; do
		sqlite3 -json "$1" "$(query $n)" >"$n.rows" 2>err || fail "query '$n' on $1: $(cat err)"
	done
	python3 check.py "$2" leaks.rows peak.rows timeline.rows >diff || fail "$1: the database and the JSON report differ:
$(cat diff)"
}
# rows QUERY DB: the query's rows, one line each, columns separated by spaces
rows() { sqlite3 -separator ' ' "$2" "$(query "$1")"; }

# --- the leak sample: sites numbered in the order of their first allocation
# (weights 1, batch 2, activations 3, loss 4, gradients 5)
traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
"$MEMTRACE" report --json trace.bin >leak.json 2>err || fail "report exited $?: $(cat err)"
answer trace.bin.db leak.json
expect_eq "$(rows leaks trace.bin.db | cut -d' ' -f1-7)" "4 0 $((20 * MiB)) 10 1 1 keep_loss" \
	"leak: the one leaking site (left at exit and growing)"
expect_eq "$(rows peak trace.bin.db | cut -d' ' -f2,4-9 | tr '\n' ';')" \
"0 $((112 * MiB)) $((112 * MiB)) 1 $((32 * MiB)) 1 alloc_weights;\
0 $((112 * MiB)) $((112 * MiB)) 5 $((32 * MiB)) 1 backward;\
0 $((112 * MiB)) $((112 * MiB)) 3 $((24 * MiB)) 1 forward;\
0 $((112 * MiB)) $((112 * MiB)) 4 $((20 * MiB)) 10 keep_loss;\
0 $((112 * MiB)) $((112 * MiB)) 2 $((4 * MiB)) 1 load_batch;" "leak: what was live at the peak"
expect_eq "$(rows timeline trace.bin.db | awk '$4 > m { m = $4 } END { print m, $4, $5, $6 }')" \
	"$((112 * MiB)) $((20 * MiB)) $((20 * MiB)) 0" "leak: timeline max, and its last row (the leak, live at the end)"

# every stack an event used has its frames: 5 allocation sites, 4 freeing
# stacks (batch, activations, gradients, weights), not only those printed
q() { sqlite3 trace.bin.db "$1"; }
expect_eq "$(q "SELECT count(*) FROM (SELECT DISTINCT trace, stack FROM events WHERE stack != 0)")" 9 \
	"leak: stacks used by events"
expect_eq "$(q "SELECT count(*) FROM (SELECT DISTINCT trace, stack FROM events WHERE stack != 0) e
	WHERE NOT EXISTS (SELECT 1 FROM stack_frames f WHERE f.trace = e.trace AND f.stack = e.stack)")" 0 \
	"leak: stacks of events without rows in stack_frames"
expect_eq "$(q "SELECT group_concat(f.function, ' ') FROM (SELECT DISTINCT stack FROM events
	WHERE op = 0) e JOIN stack_frames f ON f.trace = 1 AND f.stack = e.stack AND f.level = 0")" \
	"alloc_weights load_batch forward keep_loss backward" "leak: innermost shown frame of each allocating stack"

# --- two processes, one after the other: the leak sample, then the
# activations sample (sites 6 weights, 7 activations, 8 gradients); the
# device's peak is the second's (176 MiB = 32 + 8 x 16 + 16), with nothing
# of the first, which had ended (its 20 MiB left the device then)
TRACE=$T/run.bin traced sh -c "'$SAMPLES/leak' && '$SAMPLES/activations'" >out 2>err ||
	fail "two-process run failed: $(cat err)"
expect_eq "$(ls | grep -cE '^run\.[0-9]+\.bin$')" 2 "two-process run: traces"
"$MEMTRACE" report --json --db run.db run.*.bin >run.json 2>err || fail "report of the two exited $?: $(cat err)"
answer run.db run.json
expect_eq "$(rows leaks run.db | cut -d' ' -f1-7)" "4 0 $((20 * MiB)) 10 1 1 keep_loss" \
	"two processes: the one leaking site"
expect_eq "$(rows peak run.db | cut -d' ' -f4,6-9 | tr '\n' ';')" \
"$((176 * MiB)) 7 $((128 * MiB)) 8 layer_forward;\
$((176 * MiB)) 6 $((32 * MiB)) 1 main;\
$((176 * MiB)) 8 $((16 * MiB)) 1 layer_backward;" "two processes: what was live at the peak"
expect_eq "$(rows timeline run.db | awk '$4 > m { m = $4 } END { print m, $4 }')" "$((176 * MiB)) 0" \
	"two processes: timeline max and last row"
expect_eq "$(sqlite3 run.db "SELECT count(*) FROM (SELECT DISTINCT trace, stack FROM events WHERE stack != 0) e
	WHERE NOT EXISTS (SELECT 1 FROM stack_frames f WHERE f.trace = e.trace AND f.stack = e.stack)")" 0 \
	"two processes: stacks of events without rows in stack_frames"
exit 0
