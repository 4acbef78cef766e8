#!/bin/sh
# t261-view-figures: the page's figures are the report's, field by field,
# read from the DOM that headless Chromium built, for every demo trace and
# for the torch double's py-steps.py 8 and py-oom.py (run as t721 runs them):
# - every figure the page shows (class "fig": its data-src, a path in the
#   page's data, and data-v, its value) is the value at that path, written
#   as the text report writes it (sizes as rep_size, times as rep_time); the
#   page's "report" is byte for byte `memtrace report --json`;
# - no number column of a table shows a size that is not such a figure: a
#   figure view.js computed itself (a share, a sum) fails here;
# - each row of the peak tables, the leak tables and the OOMs' holders
#   reads as the text report's line for it (bytes, count, the site's name);
# - the framework's peaks, the tensor leak candidates with their lines and
#   the OOM verdict are on the page (py-steps: 29 MiB allocated, leaks at
#   the weights' and the leaking line; py-oom: fragmentation);
# - no two labels of a chart overlap; no script error.
# Screenshots of both torch pages go to build/view-screenshots/.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES (make tests-build)"
command -v chromium >/dev/null 2>&1 || skip "no chromium (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
mkdir -p "$B/view-screenshots"

MEMTRACE_DEMO_SIM=1 MEMTRACE_DEMO_DIR="$T/demo" timeout 120 "$ROOT/scripts/demo.sh" >demo.out 2>demo.err ||
	fail "demo.sh failed: $(tail -n 20 demo.err demo.out)"
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o steps.bin -- python3 "$TD/py-steps.py" 8 >out 2>err ||
	fail "py-steps failed: $(cat err)"
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >out 2>err ||
	fail "py-oom failed: $(cat err)"

check() { # NAME PAGE FILES...
	name=$1 page=$2; shift 2
	"$MEMTRACE" report --json --no-db "$@" >"$name.json" 2>err || fail "report --json of $name: $(cat err)"
	"$MEMTRACE" report --no-db "$@" >"$name.txt" 2>err || fail "report of $name: $(cat err)"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
		--virtual-time-budget=5000 --dump-dom "file://$page" >"$name.dom" 2>>chrome.err ||
		fail "chromium failed on $name: $(tail -n 5 chrome.err)"
	python3 "$ROOT/tests/data/view-figures.py" "$page" "$name.dom" "$name.json" "$name.txt" >"$name.check" 2>&1 ||
		fail "$name: $(tail -n 30 "$name.check")"
}

for name in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable multiprocess; do
	# shellcheck disable=SC2046
	check "$name" "$T/demo/views/$name.html" $(ls "$T/demo/$name".*bin)
done
for name in steps oom; do
	"$MEMTRACE" view -o "$T/$name.html" "$name.bin" >/dev/null 2>err || fail "view of $name: $(cat err)"
	check "$name" "$T/$name.html" "$name.bin"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chrome" \
		--virtual-time-budget=5000 --window-size=1400,2400 --screenshot="$B/view-screenshots/torch-$name.png" \
		"file://$T/$name.html" >/dev/null 2>>chrome.err
done

MiB=1048576
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
for want in "fig report.framework.devices.0.peak_allocated.allocated_bytes $((29 * MiB)) 29.0 MiB" \
	"fig report.framework.devices.0.peak_reserved.reserved_bytes $((40 * MiB)) 40.0 MiB" \
	"fig report.framework.devices.0.peak_allocated.cached_bytes $((11 * MiB)) 11.0 MiB" \
	"fig report.framework.devices.0.peak_requested.requested_bytes $((29 * MiB)) 29.0 MiB" \
	"tensor_leak 12.0 MiB 1 py-steps.py:$weights main < py-steps.py:58 <module>" \
	"tensor_leak 8.00 MiB 8 py-steps.py:$leak step < py-steps.py:46 main < py-steps.py:58 <module>" \
	"fw_active 0 bands 33 max $((29 * MiB))"; do
	grep -qxF "$want" steps.check || fail "py-steps page: no '$want' in $(cat steps.check)"
done
for want in "fig report.framework.ooms.0.verdict fragmentation fragmentation" \
	"fig report.framework.ooms.0.state.largest_free_block_bytes $((5 * MiB)) 5.00 MiB" \
	"fig report.framework.ooms.0.requested_bytes $((8 * MiB)) 8.00 MiB" \
	"oom_holder 40.0 MiB 8 py-oom.py:33 <listcomp> < py-oom.py:33 fill < py-oom.py:37 main" \
	"fw 0 labels 3 overlaps 0"; do
	grep -qxF "$want" oom.check || fail "py-oom page: no '$want' in $(cat oom.check)"
done
# plain CUDA: the sample's time to the peak, the retries, names apart
grep -q '^fig devices.0.sample_when sampled [0-9.]* [mu]s after the peak ' fragmentation.check ||
	fail "fragmentation: no sample time on the page: $(grep sample_when fragmentation.check)"
grep -qx 'oom_retries 2' fragmentation.check || fail "fragmentation: no out-of-memory retries"
exit 0
