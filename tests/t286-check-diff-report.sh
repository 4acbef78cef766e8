#!/bin/sh
# t286-check-diff-report: `memtrace check --json` and `memtrace diff --json`
# of a run against itself read every figure from the run model, so they
# equal the report's JSON (and name sites as the report's text does),
# field by field: peaks, allocated, requested, cached, left at exit less
# the cache, leak sites with their lines, OOM verdicts, site names. On the
# demo traces (samples/leak, samples/fragmentation, samples/multiprocess)
# and the torch double's programs (py-steps.py 8, py-oom.py, py-figures.py,
# whose odd sizes make allocated and requested differ: a check that took
# one for the other, or summed the requests itself, fails here; the
# double's own memory_stats() peaks are compared too). Then a guard: the
# check and diff modules read the model's figures, never the raw records,
# blocks or segments from which they could compute their own.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
for s in leak fragmentation multiprocess; do
	[ -x "$SAMPLES/$s" ] || skip "no $SAMPLES/$s (make tests-build)"
done
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble

TRACE=$T/leak.bin traced "$SAMPLES/leak" >/dev/null 2>err || fail "leak: $(cat err)"
SIMCUDA_MEM=400M TRACE=$T/frag.bin traced "$SAMPLES/fragmentation" >/dev/null 2>err || fail "fragmentation: $(cat err)"
SIMCUDA_DEVICES=2 TRACE=$T/mp.bin traced "$SAMPLES/multiprocess" >/dev/null 2>err || fail "multiprocess: $(cat err)"
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o steps.bin -- python3 "$TD/py-steps.py" 8 >/dev/null 2>err ||
	fail "py-steps: $(cat err)"
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >/dev/null 2>err ||
	fail "py-oom: $(cat err)"
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o figs.bin -- python3 "$TD/py-figures.py" >figs.out 2>err ||
	fail "py-figures: $(cat err)"

cat >cmp.py <<'PY'
import json, sys

name, ck, df, rp, txt = sys.argv[1:6]
c = json.load(open(ck))["results"]
d = json.load(open(df))
r = json.load(open(rp))
text = open(txt).read()
bad = []
def eq(what, got, want):
    if got != want:
        bad.append("%s: check/diff %r, report %r" % (what, got, want))
def res(rule):
    return [x for x in c if x["rule"] == rule]
def named(what, site):
    # a site's name is the report's: the text report shows it
    if site and site["where"] not in text:
        bad.append("%s: site name %r is not the report's" % (what, site["where"]))
def main_frame(frames):
    u = [f for f in frames if f["user"]]
    return (u or frames)[0]

devs = r["devices"]
cache = sum(x["bytes"] for x in r["cache_at_exit"])
eq("peak", res("peak <= 1TiB")[0]["value"], r["peak_all_devices"]["reserved_bytes"])
for x, dv in zip(res("allocated_peak <= 1TiB"), devs):
    eq("allocated_peak dev %d" % dv["device"], (x["device"], x["value"]), (dv["device"], dv["peak_allocated_bytes"]))
    if dv["peak_sites"]:
        eq("allocated_peak site", x["site"]["site"], dv["peak_sites"][0]["site"])
        named("allocated_peak", x["site"])
for x, dv in zip(res("untraced <= 1TiB"), devs):
    eq("untraced dev %d" % dv["device"], x["value"], dv["untraced_bytes_at_peak"])
l = res("live_at_exit <= 1TiB")[0]
eq("live_at_exit", l["value"], sum(dv["left_at_exit_bytes"] for dv in devs) - cache)
eq("live_at_exit: the cache", l["cache_at_exit"], cache)
leaks = [e for e in r["leaks"] if "live_at_exit" in e["reasons"]]
if leaks:
    eq("live_at_exit: top site", l["site"]["site"], leaks[0]["site"])
    f = main_frame(leaks[0]["frames"])
    eq("live_at_exit: its line", (l["site"]["file"], l["site"]["line"]), (f["file"], f["line"]))
    named("live_at_exit", l["site"])
else:
    eq("live_at_exit: no site", l.get("site"), None)
eq("failures", res("failures <= 1000000")[0]["value"], r["failures_total"])
eq("oom_retries", res("oom_retries <= 1000000")[0]["value"], len(r["oom_retries"]))
f0 = res("failures <= 1000000")[0].get("site")
if r["failures"]:
    fr = main_frame(r["failures"][0]["frames"])
    eq("failures: the first call", (f0["file"], f0["line"]), (fr["file"], fr["line"]))
    named("failures", f0)

# diff of the run against itself: both sides the report's figures
keys = ["peak_reserved_bytes", "peak_allocated_bytes", "cached_bytes_at_peak", "left_at_exit_bytes",
        "device_used_bytes_at_peak", "untraced_bytes_at_peak"]
eq("diff: devices", len(d["devices"]), len(devs))
for x, dv in zip(d["devices"], devs):
    for k in keys:
        eq("diff dev %d %s" % (dv["device"], k), (x[k]["before"], x[k]["after"]), (dv[k], dv[k]))
        if dv[k] is not None:
            eq("diff dev %d %s change" % (dv["device"], k), x[k]["change"], 0)
    nf = len([f for f in r["failures"] if f["device"] == dv["device"]])
    eq("diff failures", (x["failures"]["before"], x["failures"]["after"]), (nf, nf))
    no = len([f for f in r["oom_retries"] if f["device"] == dv["device"]])
    eq("diff oom_retries", (x["oom_retries"]["before"], x["oom_retries"]["after"]), (no, no))
eq("diff: sites changed", (d["sites_at_peak"], d["sites_at_exit"]), ([], []))
m = d["site_matches"]
eq("diff: every site matched exactly", (m["fuzzy"], m["before_only"], m["after_only"]), (0, 0, 0))

fw = r.get("framework")
eq("diff: framework", d["framework"] is not None, fw is not None)
if fw:
    run = [x for x in fw["devices"] if x["pid"] is None]
    for rule, moment, k in (("tensor_peak_allocated <= 1TiB", "peak_allocated", "allocated_bytes"),
                            ("requested_peak <= 1TiB", "peak_requested", "requested_bytes")):
        for x, fd in zip(res(rule), run):
            eq(rule, (x["device"], x["value"]), (fd["device"], fd[moment][k]))
            if fd[moment]["sites"]:
                eq(rule + ": site", x["site"]["tensor_site"], fd[moment]["sites"][0]["site"])
                named(rule, x["site"])
    t = res("tensor_live_at_exit <= 1TiB")[0]
    eq("tensor_live_at_exit", t["value"], sum(x["bytes"] for x in fw["leaks"]))
    sites = {s["site"]: s for s in fw["sites"]}
    want = [(x["site"], x["bytes"], x["count"], sites[x["site"]]["file"], sites[x["site"]]["line"])
            for x in fw["leaks"] if x["bytes"]][:3]
    got = [(x["tensor_site"], x["bytes"], x["count"], x["file"], x["line"]) for x in t.get("tensor_leaks", [])]
    eq("tensor_live_at_exit: the leak candidates and their lines", got, want)
    for x in t.get("tensor_leaks", []):
        named("tensor leak", x)
    o = res("ooms <= 1000")[0]
    eq("ooms", o["value"], len(fw["ooms"]))
    if fw["ooms"]:
        eq("ooms: the verdict", (o["oom"]["verdict"], o["oom"]["requested_bytes"],
                                 o["oom"]["largest_free_block_bytes"], o["oom"]["cached_bytes"]),
           (fw["ooms"][0]["verdict"], fw["ooms"][0]["requested_bytes"],
            fw["ooms"][0]["state"]["largest_free_block_bytes"], fw["ooms"][0]["state"]["cached_bytes"]))
        eq("ooms: the top holder", o["site"]["tensor_site"], fw["ooms"][0]["top_holders"][0]["site"])
        named("ooms", o["site"])
    eq("oom_fragmentation", res("oom_fragmentation <= 1000")[0]["value"],
       len([x for x in fw["ooms"] if x["verdict"] == "fragmentation"]))
    eq("drain_share", res("drain_share <= 100%")[0]["value"], fw["drains"]["share_of_run"])
    dfw = d["framework"]
    eq("diff framework: devices", len(dfw["devices"]), len(run))
    for x, fd in zip(dfw["devices"], run):
        want = {"tensor_peak_allocated_bytes": fd["peak_allocated"]["allocated_bytes"],
                "peak_requested_bytes": fd["peak_requested"]["requested_bytes"],
                "framework_peak_reserved_bytes": fd["peak_reserved"]["reserved_bytes"],
                "cached_bytes_at_peak_allocated": fd["peak_allocated"]["cached_bytes"],
                "tensor_left_at_exit_bytes": sum(l["bytes"] for l in fw["leaks"] if l["device"] == fd["device"]),
                "ooms": len([o for o in fw["ooms"] if o["device"] == fd["device"]])}
        for k, v in want.items():
            eq("diff framework dev %d %s" % (fd["device"], k), (x[k]["before"], x[k]["after"], x[k]["change"]), (v, v, 0))
    eq("diff: tensor sites changed", (dfw["tensor_sites_at_peak"], dfw["tensor_sites_at_exit"]), ([], []))
    eq("diff: tensor sites matched", dfw["tensor_site_matches"],
       {"exact": len(fw["sites"]), "fuzzy": 0, "before_only": 0, "after_only": 0})
for b in bad:
    print("%s: %s" % (name, b))
PY

rules='peak <= 1TiB|allocated_peak <= 1TiB|untraced <= 1TiB|live_at_exit <= 1TiB|failures <= 1000000|oom_retries <= 1000000'
fwrules='tensor_peak_allocated <= 1TiB|requested_peak <= 1TiB|tensor_live_at_exit <= 1TiB|ooms <= 1000|oom_fragmentation <= 1000|drain_share <= 100%'
for run in leak frag mp steps oom figs; do
	set -- "$run".bin
	[ "$run" = mp ] && set -- mp*.bin
	"$MEMTRACE" report --json --no-db "$@" >"$run.report.json" 2>err || fail "$run: report --json: $(cat err)"
	"$MEMTRACE" report --no-db "$@" >"$run.report.txt" 2>err || fail "$run: report: $(cat err)"
	r=$rules
	grep -q '"framework"' "$run.report.json" && r="$rules|$fwrules"
	IFS='|'
	# shellcheck disable=SC2086
	"$MEMTRACE" check --json $r "$@" >"$run.check.json" 2>err
	rc=$?
	unset IFS
	[ $rc = 0 ] || fail "$run: check: exit $rc: $(cat "$run.check.json" err)"
	"$MEMTRACE" diff --json "$@" -- "$@" >"$run.diff.json" 2>err || fail "$run: diff: $(cat err)"
	python3 cmp.py "$run" "$run.check.json" "$run.diff.json" "$run.report.json" "$run.report.txt" >"$run.cmp" 2>&1 ||
		fail "$run: $(cat "$run.cmp")"
	[ -s "$run.cmp" ] && fail "$(cat "$run.cmp")"
done
grep -q '"framework"' steps.report.json || fail "py-steps: no framework section"

# py-figures: allocated and requested differ, and both are PyTorch's own
expect_eq "$(python3 -c 'import json
m = json.loads([l for l in open("figs.out") if l.startswith("MEMSTATS ")][0][9:])
c = {x["rule"]: x["value"] for x in json.load(open("figs.check.json"))["results"]}
print(c["tensor_peak_allocated <= 1TiB"] == m["allocated_peak"], c["requested_peak <= 1TiB"] == m["requested_peak"],
      m["allocated_peak"] != m["requested_peak"])')" "True True True" "py-figures: the peaks are PyTorch's own"

# the guard: no figure computed from raw data in check or diff
for f in analyze/model/check.c analyze/model/check-base.c analyze/model/diff.c \
	analyze/views/check-text.c analyze/views/check-json.c analyze/views/check-junit.c \
	analyze/views/diff-text.c analyze/views/diff-json.c; do
	grep -nE -e '->(blocks|nblocks|segs|nsegs|events|live)\b' -e 'stream_next|trace_next|an_replay|srec' "$ROOT/$f" |
		grep -v 'a->sites\[i\]\|s->live' >raw.txt
	[ -s raw.txt ] && fail "$f reads raw data instead of the model's figures: $(cat raw.txt)"
done
exit 0
