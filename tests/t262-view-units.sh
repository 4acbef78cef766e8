#!/bin/sh
# t262: the page of `memtrace view` in the program's units of time
# (docs/view.md), read from the DOM headless Chromium built; every figure
# is the report's JSON's (tests/data/view-figures.py, as t261 checks it):
#   rt-nvtx train (tests/clients/rt-nvtx.c): three steps shaded on the
#     timeline and 9 outer ranges in its strip (io:load, forward,
#     backward per step: the steps hold them); the per-step table by hand:
#     peak 30/40/50 MiB, at its start 0/10/20, at its end 10/20/30, growth
#     10 MiB each (keep() holds 10 MiB more a step); the peak 50.0 MiB in
#     range 'forward' (step 3); growth 10.0 MiB a step from keep();
#   the pytest suite of t644 (tests/data/pytest-gpu/test_gpu.py): per
#     test its peak and leak, as its header works them out;
#   the torch double's py-train.py: PyTorch's peak of allocated, its step
#     and its split by category (below).
# Selecting step 3's row zooms the timelines to it (#selftest). Screenshots
# of the train page go to build/view-screenshots/units.png and, zoomed to
# step 3, units-step3.png.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"
command -v chromium >/dev/null 2>&1 || skip "no chromium (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
mkdir -p "$B/view-screenshots"

page() { # NAME: NAME.bin to NAME.html, its DOM and its figures checked
	"$MEMTRACE" view -o "$T/$1.html" "$T/$1.bin" >/dev/null 2>err || fail "view of $1: $(cat err)"
	"$MEMTRACE" report --json --no-db "$T/$1.bin" >"$1.json" 2>err || fail "report --json of $1: $(cat err)"
	"$MEMTRACE" report --no-db "$T/$1.bin" >"$1.txt" 2>err || fail "report of $1: $(cat err)"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
		--virtual-time-budget=5000 --dump-dom "file://$T/$1.html" >"$1.dom" 2>>chrome.err ||
		fail "chromium failed on $1: $(tail -n 5 chrome.err)"
	python3 "$ROOT/tests/data/view-figures.py" "$T/$1.html" "$1.dom" "$1.json" "$1.txt" >"$1.check" 2>&1 ||
		fail "$1: $(tail -n 30 "$1.check")"
}
want() { # NAME LINE...: each line is one of NAME.check's
	pg=$1; shift
	for w in "$@"; do
		grep -qxF "$w" "$pg.check" || fail "$pg page: no '$w' in $(cat "$pg.check")"
	done
}

TRACE=$T/train.bin traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
page train
timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --window-size=1400,1300 --screenshot="$B/view-screenshots/units.png" \
	"file://$T/train.html" >/dev/null 2>>chrome.err
MiB=1048576
want train "errors 0" "units steps 3" "units ranges 4" "device 0 step_bands 3 ranges 9" \
	"fig report.ranges.peaks.0.reserved_bytes $((50 * MiB)) 50.0 MiB" \
	"fig report.ranges.growth.reserved_per_step $((10 * MiB)) 10.0 MiB" \
	"fig report.ranges.growth.site_bytes_per_step $((10 * MiB)) 10.0 MiB"
for n in 1 2 3; do
	k=$((n - 1))
	want train "fig report.ranges.steps.$k.step $n $n" \
		"fig report.ranges.steps.$k.peak_reserved $(((20 + 10 * n) * MiB)) $((20 + 10 * n)).0 MiB" \
		"fig units.steps.$k.growth_bytes $((10 * MiB)) 10.0 MiB"
	[ $n = 1 ] && z="0 0 B" || z="$((10 * k * MiB)) $((10 * k)).0 MiB"
	want train "fig report.ranges.steps.$k.reserved_at_start $z" \
		"fig report.ranges.steps.$k.reserved_at_end $((10 * n * MiB)) $((10 * n)).0 MiB"
done
# Enter on step 3's row: the timelines show step 3 (page.html#selftest)
timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom "file://$T/train.html#selftest" >selftest.dom 2>>chrome.err ||
	fail "chromium failed on the selftest"
grep -q "^selftest step_zoom 1 bands [12]$" selftest.dom || fail "step 3's row: $(grep '^selftest\|^error' selftest.dom)"
timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --window-size=1400,900 --screenshot="$B/view-screenshots/units-step3.png" \
	"file://$T/train.html#selftest" >/dev/null 2>>chrome.err
grep -q "</span> reserved in range ‘forward’ (step 3) at <span" train.dom ||
	fail "the peak's range and step are not on the page"

# PyTorch's peak of allocated and its split by category, on the double's
# training program (tests/torchdouble/py-train.py; tests/t732 works out its
# blocks): at step 2's peak, after its forward, parameters 3 x 4 KiB + the
# 512 B scale = 12800, no gradients (zero_grad set them to None), optimizer
# state 3 x 4 KiB, activations the two 1 MiB blocks, temporaries the input
# and the loss (512 B blocks each); cache 4 MiB reserved - 2123264
TD=$ROOT/tests/torchdouble
PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim "$MEMTRACE" run --no-summary -o "$T/torch.bin" -- \
	python3 "$TD/py-train.py" 3 >torch.out 2>torch.err || fail "py-train.py: $(cat torch.err)"
page torch
c=report.ranges.framework_peaks.0
want torch "errors 0" "fig $c.allocated_bytes 2123264 2.02 MiB" "fig $c.categories.parameters 12800 12.5 KiB" \
	"fig $c.categories.gradients 0 0 B" "fig $c.categories.optimizer_state 12288 12.0 KiB" \
	"fig $c.categories.activations $((2 * MiB)) 2.00 MiB" "fig $c.categories.temporaries 1024 1.00 KiB" \
	"fig $c.categories.cache 2071040 1.98 MiB"
grep -q "</span> allocated in step 2: parameters <span" torch.dom || fail "the peak's step is not on the torch page"

# pytest: the tests' table
PY=/usr/bin/python3
if "$PY" -m pytest --version >/dev/null 2>&1; then
	cp "$ROOT/tests/data/pytest-gpu/test_gpu.py" .
	(unset PYTEST_PLUGINS PYTEST_ADDOPTS; TRACE=$T/tests.bin traced "$PY" -m pytest -p no:cacheprovider -q test_gpu.py >out 2>err)
	page tests
	want tests "errors 0" "units tests 7"
	for w in "0 $((8 * MiB)) 8.00 MiB" "1 $((3 * MiB)) 3.00 MiB" "2 $((19 * MiB)) 19.0 MiB" "3 $((23 * MiB)) 23.0 MiB" \
		"4 $((5 * MiB)) 5.00 MiB" "5 $((6 * MiB)) 6.00 MiB" "6 $((10 * MiB)) 10.0 MiB"; do
		want tests "fig report.ranges.tests.${w%% *}.peak_reserved ${w#* }"
	done
	for w in "0 0 0 B" "1 $((3 * MiB)) 3.00 MiB" "2 0 0 B" "4 $((2 * MiB)) 2.00 MiB" "6 0 0 B"; do
		want tests "fig units.tests.${w%% *}.leaked_bytes ${w#* }"
	done
fi
exit 0
