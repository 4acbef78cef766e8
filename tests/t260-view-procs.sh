#!/bin/sh
# t260-view-procs: the processes of one device in `memtrace view`, and the
# allocations as PyTorch's "active memory", in headless Chromium. The leak
# and fragmentation samples run one after the other on device 0 (figures
# in samples/README.md): their page stacks the two processes' own rows,
# which add up to the device's at every row of it; the stack tops at the
# leak sample's 112 MiB peak, the fragmentation process alone at its
# 100 MiB. Active memory stacks all 47 allocations (41 cudaMalloc of the
# leak sample, 6 of the fragmentation sample) and peaks at 112 MiB: the
# 20 MiB the leak sample left live went back to the device when it ended,
# before the fragmentation sample started. The address map takes the
# focus and the arrow keys: right three times, left once selects the
# second allocation of the run (the leak sample's first 4 MiB batch,
# load_batch) and shows it in the details panel. No script error.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] && [ -x "$SAMPLES/fragmentation" ] || skip "no $SAMPLES (make tests-build)"
command -v chromium >/dev/null 2>&1 || skip "no chromium (scripts/install-deps.sh installs it)"
cd "$T" || exit 1

TRACE=$T/leak.bin traced "$SAMPLES/leak" >out 2>err || fail "leak failed: $(cat err)"
SIMCUDA_MEM=400M TRACE=$T/frag.bin traced "$SAMPLES/fragmentation" >out 2>err ||
	fail "fragmentation failed: $(cat err)"
"$MEMTRACE" view -o page.html leak.bin frag.bin >out 2>err || fail "view failed: $(cat err)"
fpid=$("$MEMTRACE" dump frag.bin | sed -n 's/^.* pid=\([0-9]*\).*$/\1/p' | head -n 1)
[ -n "$fpid" ] || fail "no pid in the fragmentation trace"

timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom "file://$T/page.html#selftest" >dom 2>chrome.err ||
	fail "chromium failed: $(tail -n 5 chrome.err)"
sed -n '/^<pre id="memtrace-check"/,/^<\/pre>/p' dom | sed 's/^<pre[^>]*>//' >check
MiB=1048576
rows=$(sed -n 's/^device 0 stack_rows \([0-9]*\) mismatches 0$/\1/p' check)
[ -n "$rows" ] && [ "$rows" -gt 10 ] || fail "stacked rows: $(grep stack_rows check)"
for want in 'errors 0' 'devices 1' 'processes 2' 'device 0 processes 2' \
	"device 0 peak_shown $((112 * MiB))" "active 0 bands 47 max $((112 * MiB))" \
	"selftest tl_stack areas 2 top_max $((112 * MiB))" \
	"selftest tl_one only pid $fpid max $((100 * MiB))" 'selftest tl_sum series 4' \
	"selftest map_keys focused 1 selected $((4 * MiB)) details Allocation of 4.00 MiB (site 2)" \
	'selftest done'; do
	grep -qxF "$want" check || fail "no '$want' in: $(cat check)"
done
grep -qE '^selftest active_hover 1 [0-9.]+ MiB \(pid [0-9]+, 0x[0-9a-f]+\)$' check ||
	fail "active memory hover: $(grep active_hover check)"
exit 0
