#!/bin/sh
# t320-consistency: one run model, every view agrees. For every trace the
# demo makes (scripts/demo.sh's samples, traced here the same way) and for
# two processes run one after the other (the leak sample, then the
# activations sample), the database, `memtrace report --json` and the TSV
# of `memtrace plot` hold the same numbers:
# - the sites live at a device's peak (all of them in peak_sites, the top
#   10 in the JSON) add up to at most that peak;
# - the timeline's row at the peak's time (or the last before it) is the
#   peak's reserved and allocated, no row exceeds the peak, the last row is
#   what was live at the end of the run, and a process's row at its end is
#   what it left at exit;
# - the database's peaks, sites, leak candidates and totals equal the JSON's;
#   each site's allocations (joined through site_stacks) give its totals;
# - timeline-devN.tsv holds the database's timeline rows of device N;
# and the figures of samples/README.md, by hand.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/multiprocess" ] || skip "no $SAMPLES (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3 to read the JSON report"
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"
cd "$T" || exit 1
plots=1
command -v gnuplot >/dev/null 2>&1 || { plots=0; echo "gnuplot is not installed: the plots' TSV are not checked"; }

# check.py JSON DB [PLOTDIR]: every check above; prints one line per
# difference and exits 1, or the figures of each device (MiB) and exits 0:
#   dev D peak R A sites S/N left L end E last T leaks K
#   trace P dev D peak R A sites S/N left L at_exit X
cat >check.py <<'EOF'
import json, os, sqlite3, sys
r = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
plotdir = sys.argv[3] if len(sys.argv) > 3 else ""
bad, figs = [], []
MiB = 1048576
def q(sql, *args):
    return db.execute(sql, args).fetchall()
def mib(b):
    return str(b // MiB) if b % MiB == 0 else "%.3f" % (b / MiB)
def main_frame(e):
    f = [x for x in e["frames"] if x["user"]] or e["frames"]
    return (f[0]["function"], f[0]["file"], f[0]["line"] or None) if f else (None, None, None)
def jdev(d):
    return -1 if d == "host" else d

ends = {t: e for t, e in q("SELECT trace, time_ns FROM process_ends")}
sites = {x[0]: x for x in q("SELECT id, device, caching, function, file, line, processes, exit_bytes,"
                            " exit_count, leak_at_exit, leak_growing, interrupted FROM sites")}

def device(trace, d, where):
    """One device (trace None: of the run) against its rows."""
    host, dv = d["hostname"], d["device"]
    key = "%s %s:%d" % (where, host, dv)
    pk = q("SELECT time_ns, reserved, allocated, device_used, sample_ns, left_at_exit, live_at_end"
           " FROM peaks WHERE trace IS ? AND host = ? AND device = ?", trace, host, dv)
    want = (d["peak_reserved_time_ns"], d["peak_reserved_bytes"], d["peak_allocated_bytes"],
            d["device_used_bytes_at_peak"],
            d["device_used_sample_time_ns"] if d["device_used_bytes_at_peak"] is not None else None,
            d["left_at_exit_bytes"], d["live_at_end_bytes"])
    if not d["peak_reserved_bytes"]:
        if pk:
            bad.append("%s: a peaks row for a device without a peak: %s" % (key, pk))
        return
    if pk != [want]:
        bad.append("%s: peaks rows %s, JSON %s" % (key, pk, want))
        return
    peak, alloc, t = d["peak_reserved_bytes"], d["peak_allocated_bytes"], d["peak_reserved_time_ns"]

    # what was live at the peak: all sites, and the JSON's top 10
    ps = q("SELECT site, bytes, count, processes FROM peak_sites WHERE trace IS ? AND host = ?"
           " AND device = ? ORDER BY bytes DESC, site", trace, host, dv)
    js = [(e["site"], e["bytes"], e["count"], e["processes"]) for e in d["peak_sites"]]
    if ps[:10] != js or len(js) != min(len(ps), 10):
        bad.append("%s: peak_sites rows %s, JSON %s" % (key, ps, js))
    for e in d["peak_sites"]:
        if e["device"] != dv:
            bad.append("%s: JSON peak site %d on device %s" % (key, e["site"], e["device"]))
    total = sum(x[1] for x in ps)
    if total > peak:
        bad.append("%s: the sites at the peak hold %d bytes, more than the peak %d" % (key, total, peak))
    if sum(x[1] for x in js) > peak:
        bad.append("%s: the JSON's sites at the peak hold more than the peak %d" % (key, peak))

    # the timeline
    tl = q("SELECT time_ns, reserved, allocated, cached FROM timeline WHERE trace IS ? AND host = ?"
           " AND device = ? ORDER BY time_ns, rowid", trace, host, dv)
    if not tl:
        bad.append("%s: no timeline rows" % key)
        return
    at = [x for x in tl if x[0] <= t]
    if not at or at[-1][1:3] != (peak, alloc):
        bad.append("%s: timeline at the peak's time %d: %s, JSON %d %d" % (key, t, at[-1:], peak, alloc))
    if max(x[1] for x in tl) > peak:
        bad.append("%s: a timeline row of %d bytes, above the peak %d" % (key, max(x[1] for x in tl), peak))
    for x in tl:
        if x[3] != x[1] - x[2] or x[2] > x[1]:
            bad.append("%s: timeline row %s: cached is not reserved - allocated" % (key, x))
            break
    # the device's last row is the end of the run (a process's is checked
    # at the process's end, below)
    if trace is None and tl[-1][:2] != (r["duration_ns"], d["live_at_end_bytes"]):
        bad.append("%s: last timeline row %s, JSON: live at the end %d at %d"
                   % (key, tl[-1], d["live_at_end_bytes"], r["duration_ns"]))
    line = "peak %s %s sites %s/%d left %s" % (mib(peak), mib(alloc), mib(total), len(ps),
                                               mib(d["left_at_exit_bytes"]))
    if trace is None:
        leaks = sum(e["bytes"] for e in r["leaks"] if e["device"] == dv)
        figs.append("dev %d %s end %s last %s leaks %s" % (dv, line, mib(d["live_at_end_bytes"]),
                                                            mib(tl[-1][1]), mib(leaks)))
        # left at exit: the sites' bytes never exceed it
        ex = q("SELECT coalesce(sum(exit_bytes), 0) FROM sites WHERE device = ?", dv)[0][0]
        if ex > d["left_at_exit_bytes"]:
            bad.append("%s: sites left %d bytes at exit, more than the device's %d"
                       % (key, ex, d["left_at_exit_bytes"]))
        if plotdir:
            tsv(os.path.join(plotdir, "timeline-dev%d.tsv" % dv), tl, key)
    else:
        # the process's own row at its end is what it left at exit
        x = [y for y in tl if y[0] <= ends[trace]]
        ax = x[-1][1] if x else 0
        if ax != d["left_at_exit_bytes"]:
            bad.append("%s: timeline at the process's end %d: %d, JSON left at exit %d"
                       % (key, ends[trace], ax, d["left_at_exit_bytes"]))
        figs.append("trace %d dev %d %s at_exit %s" % (trace, dv, line, mib(ax)))
        # and nothing after it: a process's own timeline ends with it (its
        # last row was put at the end of the run, after it had ended)
        last = q("SELECT last_ns FROM processes WHERE trace = ?", trace)[0][0]
        if tl[-1][0] > last:
            bad.append("%s: a timeline row at %d, after the process's last record at %d"
                       % (key, tl[-1][0], last))

def tsv(path, tl, key):
    """timeline-devN.tsv: time_s reserved_MiB allocated_MiB cached_MiB, to its precision."""
    if not os.path.exists(path):
        bad.append("%s: no %s" % (key, path))
        return
    got = [l.rstrip("\n").split("\t") for l in open(path) if not l.startswith("#")]
    if len(got) != len(tl):
        bad.append("%s: %d rows in %s, %d in the database" % (key, len(got), path, len(tl)))
        return
    for g, x in zip(got, tl):
        want = (x[0] / 1e9, x[1] / MiB, x[2] / MiB, x[3] / MiB)
        for s, v in zip(g, want):
            d = len(s.split(".")[1]) if "." in s else 0
            if abs(float(s) - v) > 0.5 * 10 ** -d + 1e-12:
                bad.append("%s: %s row %s, database %s" % (key, os.path.basename(path), g, x))
                return

for d in r["devices"]:
    device(None, d, "device")
for i, p in enumerate(r["processes"]):
    for d in p["devices"]:
        device(i + 1, d, "trace %d" % (i + 1))
# no rows the JSON does not have
njson = sum(1 for d in r["devices"] if d["peak_reserved_bytes"]) + \
        sum(1 for p in r["processes"] for d in p["devices"] if d["peak_reserved_bytes"])
if q("SELECT count(*) FROM peaks")[0][0] != njson:
    bad.append("peaks: %d rows, %d devices with a peak in the JSON" % (q("SELECT count(*) FROM peaks")[0][0], njson))
if r["peak_sites"] != [e for d in r["devices"] for e in d["peak_sites"]]:
    bad.append("JSON: peak_sites is not the devices' lists")

# every site the JSON names is the database's site
for what, es in (("peak_sites", [e for d in r["devices"] for e in d["peak_sites"]] +
                  [e for p in r["processes"] for d in p["devices"] for e in d["peak_sites"]]),
                 ("leaks", r["leaks"]), ("cache_at_exit", r["cache_at_exit"])):
    for e in es:
        s = sites.get(e["site"])
        if not s or (s[1], s[2]) != (jdev(e["device"]), int(e["caching_allocator"])) \
           or s[3:6] != main_frame(e):
            bad.append("%s: site %d: database %s, JSON %s %s %s" % (what, e["site"], s, e["device"],
                       e["caching_allocator"], main_frame(e)))
# leak candidates and the caching allocators' cache at exit, in the report's order
lk = q("SELECT id, exit_bytes, exit_count, leak_at_exit, leak_growing, interrupted, processes FROM sites"
       " WHERE leak_at_exit OR leak_growing ORDER BY exit_bytes DESC, id")
jl = [(e["site"], e["bytes"], e["count"], int("live_at_exit" in e["reasons"]), int("growing" in e["reasons"]),
       int(e["interrupted"]), e["processes"]) for e in r["leaks"]]
if lk[:10] != jl or len(jl) != min(len(lk), 10):
    bad.append("leaks: database %s, JSON %s" % (lk, jl))
ca = q("SELECT id, exit_bytes, exit_count FROM sites WHERE caching AND exit_bytes > 0"
       " ORDER BY exit_bytes DESC, id")
jc = [(e["site"], e["bytes"], e["count"]) for e in r["cache_at_exit"]]
if ca[:10] != jc or len(jc) != min(len(ca), 10):
    bad.append("cache_at_exit: database %s, JSON %s" % (ca, jc))
if len(lk) <= 10 and sum(x[1] for x in lk) != sum(e["bytes"] for e in r["leaks"]):
    bad.append("leak totals: database %d, JSON %d" % (sum(x[1] for x in lk), sum(e["bytes"] for e in r["leaks"])))

# a site's allocations, through site_stacks, give its totals
for sid, n, b, live in q("SELECT ss.site, count(*), sum(a.bytes), coalesce(sum(CASE WHEN a.free_ns IS NULL"
                         " THEN a.bytes END), 0) FROM allocations a JOIN site_stacks ss ON ss.trace = a.trace"
                         " AND ss.stack = a.stack AND ss.device = a.device GROUP BY ss.site"):
    s = q("SELECT allocs, bytes, exit_bytes FROM sites WHERE id = ?", sid)
    if s != [(n, b, live)]:
        bad.append("site %d: its allocations count %d, %d bytes, %d never freed; sites says %s" % (sid, n, b, live, s))
if q("SELECT count(*) FROM sites WHERE id NOT IN (SELECT site FROM site_stacks)")[0][0]:
    bad.append("sites without a stack in site_stacks")

print("\n".join(bad) if bad else "\n".join(figs))
sys.exit(1 if bad else 0)
EOF

# consistent NAME FILE...: reports and plots FILE... (NAME.db, NAME.json,
# NAME.plots/), runs check.py; the figures in NAME.figs
consistent() {
	name=$1; shift
	"$MEMTRACE" report --json --db "$name.db" "$@" >"$name.json" 2>err ||
		fail "$name: report exited $?: $(cat err)"
	dir=
	if [ $plots = 1 ]; then
		"$MEMTRACE" plot -o "$name.plots" "$@" >/dev/null 2>err || fail "$name: plot exited $?: $(cat err)"
		dir=$name.plots
	fi
	python3 check.py "$name.json" "$name.db" $dir >"$name.figs" 2>&1 ||
		fail "$name: the views differ:
$(cat "$name.figs")"
}
# run NAME CMD...: CMD on the simulated GPU under memtrace, into NAME.bin
# (other processes NAME.PID.bin), then checked
run() {
	name=$1; shift
	TRACE=$T/$name.bin traced "$@" >out 2>err || fail "$name: '$*' failed: $(cat err)"
	# one trace, or those of the processes, in the order they started
	consistent "$name" $(ls "$name".bin 2>/dev/null; ls "$name".[0-9]*.bin 2>/dev/null | sort -t. -k2,2n)
}

# --- the demo's traces (scripts/demo.sh), with its settings, and the
# figures of samples/README.md
run leak "$SAMPLES/leak"
expect_eq "$(cat leak.figs)" "dev 0 peak 112 112 sites 112/5 left 20 end 20 last 20 leaks 20
trace 1 dev 0 peak 112 112 sites 112/5 left 20 at_exit 20" "leak: peak, sites at it, left at exit, end"
SIMCUDA_MEM=400M run fragmentation "$SAMPLES/fragmentation"
expect_eq "$(cat fragmentation.figs)" "dev 0 peak 100 100 sites 100/1 left 0 end 0 last 0 leaks 0
trace 1 dev 0 peak 100 100 sites 100/1 left 0 at_exit 0" "fragmentation"
run activations "$SAMPLES/activations"
expect_eq "$(cat activations.figs)" "dev 0 peak 176 176 sites 176/3 left 0 end 0 last 0 leaks 0
trace 1 dev 0 peak 176 176 sites 176/3 left 0 at_exit 0" "activations"
run checkpoint "$SAMPLES/activations" --checkpoint
expect_eq "$(cat checkpoint.figs)" "dev 0 peak 128 128 sites 128/4 left 0 end 0 last 0 leaks 0
trace 1 dev 0 peak 128 128 sites 128/4 left 0 at_exit 0" "activations --checkpoint"
# the pool: 96 MiB reserved, 72 used by three 24 MiB allocations (the sites)
run stream-ordered "$SAMPLES/stream-ordered"
expect_eq "$(cat stream-ordered.figs)" "dev 0 peak 96 72 sites 72/1 left 0 end 0 last 0 leaks 0
trace 1 dev 0 peak 96 72 sites 72/1 left 0 at_exit 0" "stream-ordered"
# three 20 MiB pages created, the third not mapped yet at the peak
run pinned-expandable "$SAMPLES/pinned-expandable"
expect_eq "$(cat pinned-expandable.figs)" "dev 0 peak 60 40 sites 60/1 left 0 end 0 last 0 leaks 0
trace 1 dev 0 peak 60 40 sites 60/1 left 0 at_exit 0" "pinned-expandable"
SIMCUDA_DEVICES=2 run multiprocess "$SAMPLES/multiprocess" 2
[ -e multiprocess.bin ] && fail "multiprocess: the launcher wrote a trace"
expect_eq "$(sed 's/^trace [0-9]* /trace /' multiprocess.figs | sort)" "dev 0 peak 48 48 sites 48/2 left 0 end 0 last 0 leaks 0
dev 1 peak 80 80 sites 80/2 left 0 end 0 last 0 leaks 0
trace dev 0 peak 48 48 sites 48/2 left 0 at_exit 0
trace dev 1 peak 80 80 sites 80/2 left 0 at_exit 0" "multiprocess"

# --- two processes, one after the other: the device's peak is the second's,
# 176 MiB, and its sites hold exactly that (not 196 MiB: the first's 20 MiB
# left the device when it ended); the first still left 20 MiB at its exit,
# and the device ends at 0
run two sh -c "'$SAMPLES/leak' && '$SAMPLES/activations'"
expect_eq "$(ls | grep -cE '^two\.[0-9]+\.bin$')" 2 "two processes: traces"
expect_eq "$(cat two.figs)" "dev 0 peak 176 176 sites 176/3 left 20 end 0 last 0 leaks 20
trace 1 dev 0 peak 112 112 sites 112/5 left 20 at_exit 20
trace 2 dev 0 peak 176 176 sites 176/3 left 0 at_exit 0" "two processes"
exit 0
