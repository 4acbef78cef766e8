#!/bin/sh
# t260-view-demo: the page of `memtrace view` in a real browser, for every
# trace of the demo (scripts/demo.sh, which writes the pages too): headless
# Chromium runs its scripts, and the figures the page shows (written into
# its hidden #memtrace-check) are the report's: the peak of every device
# (as labelled, and the highest row of the timeline drawn), the number of
# top sites per device, of leak candidates, failures and processes, and the
# number of sites equals the database's; each process's own rows add up
# to its device's, and active memory peaks at each multiprocess worker's
# figure. No script error. Screenshots of
# each page go to build/view-screenshots/ for a person to look at.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/multiprocess" ] || skip "no $SAMPLES (make tests-build)"
command -v chromium >/dev/null 2>&1 || skip "no chromium (scripts/install-deps.sh installs it)"

MEMTRACE_DEMO_SIM=1 MEMTRACE_DEMO_DIR="$T/demo" timeout 120 "$ROOT/scripts/demo.sh" >"$T/out" 2>"$T/err" ||
	fail "demo.sh failed: $(cat "$T/err" "$T/out" | tail -n 20)"
grep -q "^open in a browser: .*demo/view.html" "$T/out" || fail "demo does not name view.html: $(tail "$T/out")"
[ -s "$T/demo/view.html" ] || fail "no view.html"
mkdir -p "$B/view-screenshots"

# view.html is an index: one link per run, to that run's own page, with
# the words the demo printed for it; no run drawn there (no data of its own)
python3 - "$T/demo/view.html" "$T/out" "$T/demo" >"$T/index.check" 2>&1 <<'PY' || fail "the index: $(cat "$T/index.check")"
import os, re, sys
page, out, demo = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
assert "memtrace-data" not in page, "the index draws a run of its own"
rows = re.findall(r'<tr><td><a href="views/([^"]+)\.html">[^<]*</a></td><td>([^<]*)</td>', page)
names = [n for n, _ in rows]
assert names == ["leak", "fragmentation", "activations", "activations-checkpoint", "stream-ordered",
                 "pinned-expandable", "multiprocess"], names
for n, what in rows:
    assert os.path.exists(os.path.join(demo, "views", n + ".html")), n
    assert re.search(r"^  %s\.(PID\.)?bin.*  %s$" % (re.escape(n), re.escape(what)), out, re.M), (n, what)
PY


# chrome PAGE OUT.dom [SCREENSHOT]
chrome() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
		--virtual-time-budget=5000 --dump-dom "$1" >"$2" 2>>"$T/chrome.err" ||
		fail "chromium failed on $1: $(tail -n 5 "$T/chrome.err")"
	[ -n "${3:-}" ] && timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$T/chrome" --virtual-time-budget=5000 --window-size=1280,2800 \
		--screenshot="$3" "$1" >/dev/null 2>>"$T/chrome.err"
	return 0
}

for name in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable \
	multiprocess; do
	page=$T/demo/views/$name.html files=$(ls "$T/demo/$name".*bin)
	chrome "$page" "$T/$name.dom" "$B/view-screenshots/$name.png"
	# shellcheck disable=SC2086
	"$MEMTRACE" report --json --db "$T/$name.db" $files >"$T/$name.json" 2>"$T/err" ||
		fail "report of $name: $(cat "$T/err")"
	sites=$(sqlite3 "$T/$name.db" 'SELECT count(*) FROM sites')
	python3 - "$page" "$T/$name.dom" "$T/$name.json" "$sites" >"$T/$name.check" 2>&1 <<'PY' ||
import html, json, re, sys
page, dom, rep, nsites = open(sys.argv[1]).read(), open(sys.argv[2]).read(), json.load(open(sys.argv[3])), int(sys.argv[4])
data = re.search(r'<script type="application/json" id="memtrace-data">(.*?)</script>', page, re.S).group(1)
assert "<" not in data, "a '<' in the data script"
rep.pop("database", None)
assert json.loads(data)["report"] == rep, "the page's report differs from memtrace report --json"
m = re.search(r'<pre id="memtrace-check"[^>]*>(.*?)</pre>', dom, re.S)
assert m, "no #memtrace-check in the DOM: the scripts did not run"
shown = html.unescape(m.group(1))
want = ["errors 0"]
want.append("devices %d" % len(rep["devices"]))
for i, d in enumerate(rep["devices"]):
    want.append("device %d peak_shown %d" % (i, d["peak_reserved_bytes"]))
    want.append("device %d timeline_max %d" % (i, d["peak_reserved_bytes"]))
    want.append("device %d top_sites %d" % (i, len(d["peak_sites"])))
want += ["leaks %d" % len(rep["leaks"]), "failures %d" % len(rep["failures"]),
         "sites %d" % nsites, "processes %d" % len(rep["processes"]), "done 1"]
lines = shown.splitlines()
missing = [w for w in want if w not in lines]
assert not missing, "shown:\n%s\nexpected lines missing: %s" % (shown, missing)
print(shown)
PY
		fail "$name: $(cat "$T/$name.check")"
done

# figures worked out by hand (samples/README.md): the fragmentation sample
# peaks at 100 MiB and fails twice; the leak sample has one leak candidate
grep -qx 'device 0 peak_shown 104857600' "$T/fragmentation.check" || fail "fragmentation peak: $(cat "$T/fragmentation.check")"
grep -qx 'failures 2' "$T/fragmentation.check" || fail "fragmentation failures: $(cat "$T/fragmentation.check")"
grep -qx 'leaks 1' "$T/leak.check" || fail "leak candidates: $(cat "$T/leak.check")"
grep -qx 'devices 2' "$T/multiprocess.check" || fail "multiprocess devices: $(cat "$T/multiprocess.check")"
# one worker per device, 4 cudaMalloc each: rank 0 holds 32 + 16 MiB at
# most, rank 1 64 + 16
for want in 'device 0 processes 1' 'device 1 processes 1' 'active 0 bands 4 max 50331648' \
	'active 1 bands 4 max 83886080'; do
	grep -qx "$want" "$T/multiprocess.check" || fail "multiprocess: no '$want' in $(cat "$T/multiprocess.check")"
done
for name in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable multiprocess; do
	grep -qE '^device [0-9]+ stack_rows [0-9]+ mismatches 0$' "$T/$name.check" &&
		! grep -qE '^device [0-9]+ stack_rows [0-9]+ mismatches [1-9]' "$T/$name.check" ||
		fail "$name: processes' rows do not add up: $(grep stack_rows "$T/$name.check")"
done

# the claims the demo printed are the pages' figures: the activations'
# peaks, the fragmentation sample's two failed 30 MiB cudaMallocs
grep -q '^  activations.bin .*: 176 MiB$' "$T/out" && grep -qx "device 0 peak_shown $((176 * 1048576))" "$T/activations.check" ||
	fail "activations: the demo's 176 MiB is not the page's peak"
grep -q '^  activations-checkpoint.bin .*: 128 MiB$' "$T/out" && grep -qx "device 0 peak_shown $((128 * 1048576))" "$T/activations-checkpoint.check" ||
	fail "activations-checkpoint: the demo's 128 MiB is not the page's peak"
grep -q '^  fragmentation.bin .*cudaMalloc of 30 MiB fails twice; out-of-memory retries$' "$T/out" &&
	grep -qx 'oom_retries 2' "$T/fragmentation.check" || fail "fragmentation: the demo's claim is not on the page"

# the controls, worked by the page itself (views/leak.html#selftest): wheel zoom
# and pan, double-click back to the whole run, a click on the timeline
# shows that moment in the flame graph, each flame mode draws (at exit and
# in leaks mode: all, main, keep_loss, the leak sample's one leak), a box
# zooms in, the sites sort by bytes at the peak (the leak sample's largest:
# 32 MiB), Enter on a peak row opens its stack (alloc_weights < main)
timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
	--window-size=1400,900 --screenshot="$B/view-screenshots/index.png" "file://$T/demo/view.html" >/dev/null 2>>"$T/chrome.err"
timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom "file://$T/demo/views/leak.html#selftest" >"$T/selftest.dom" 2>>"$T/chrome.err" ||
	fail "chromium failed on the selftest"
sed -n '/^<pre id="memtrace-check"/,/^<\/pre>/p' "$T/selftest.dom" | sed 's/^<pre[^>]*>//' >"$T/selftest"
for want in 'errors 0' 'selftest wheel_zoom 1' 'selftest wheel_pan 1' 'selftest reset 1' \
	'selftest flame_at_click 1' 'selftest flame_zoom 1' 'selftest sort_by_peak 32.0 MiB' \
	'selftest stack_frames 2 hidden false' 'selftest map_hover 1' 'selftest done'; do
	grep -qx "$want" "$T/selftest" || fail "selftest: no '$want' in: $(cat "$T/selftest")"
done
grep -qE '^selftest flame_nodes peak:[0-9]+ exit:3 leaks:3$' "$T/selftest" ||
	fail "selftest flame modes: $(grep flame_nodes "$T/selftest")"
exit 0
