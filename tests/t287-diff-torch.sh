#!/bin/sh
# t287-diff-torch: `memtrace diff` of py-steps.py 8 (weights and the history
# kept to the end) against py-steps-fixed.py 8 (the same lines, everything
# freed), both run from the same path. Figures by hand: PyTorch's peaks the
# same on both sides (allocated and requested 29 MiB, reserved 40 MiB,
# cached at the peak of allocated 11 MiB); tensors left at exit 20 MiB
# before, 0 after; the five tensor sites matched exactly by their Python
# frames; at exit the weights (12 MiB, line L:weights) and the history
# (8 MiB, line L:leak) disappear, largest first, named as the report names
# them. --fail-if 'tensor_live_at_exit > 0' holds the other way round.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
MiB=1048576
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
mkdir p
cp "$TD/py-steps.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o leak.bin -- python3 p/py-steps.py 8 >/dev/null 2>err ||
	fail "py-steps: $(cat err)"
cp "$TD/py-steps-fixed.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o fixed.bin -- python3 p/py-steps.py 8 >/dev/null 2>err ||
	fail "py-steps-fixed: $(cat err)"

"$MEMTRACE" diff --json leak.bin fixed.bin >d.json 2>err || fail "diff --json: $(cat err)"
dj() { python3 -c 'import json, sys
r = json.load(open("d.json")); f = r["framework"]
def fig(d, k): return "%s %s %s" % (d[k]["before"], d[k]["after"], d[k]["change"])
print(eval(sys.argv[1]))' "$1"; }
d='f["devices"][0]'
expect_eq "$(dj "fig($d, 'tensor_peak_allocated_bytes'), fig($d, 'peak_requested_bytes'), fig($d, 'framework_peak_reserved_bytes'), fig($d, 'cached_bytes_at_peak_allocated')")" \
	"('$((29 * MiB)) $((29 * MiB)) 0', '$((29 * MiB)) $((29 * MiB)) 0', '$((40 * MiB)) $((40 * MiB)) 0', '$((11 * MiB)) $((11 * MiB)) 0')" "the peaks"
expect_eq "$(dj "fig($d, 'tensor_left_at_exit_bytes'), fig($d, 'ooms')")" "('$((20 * MiB)) 0 -$((20 * MiB))', '0 0 0')" "left at exit"
expect_eq "$(dj 'f["tensor_site_matches"], f["tensor_sites_at_peak"]')" \
	"({'exact': 5, 'fuzzy': 0, 'before_only': 0, 'after_only': 0}, [])" "tensor sites matched"
expect_eq "$(dj '[(s["status"], s["match"], s["line"], s["before_bytes"], s["after_bytes"]) for s in f["tensor_sites_at_exit"]]')" \
	"[('disappeared', 'exact', $weights, $((12 * MiB)), 0), ('disappeared', 'exact', $leak, $((8 * MiB)), 0)]" "tensor sites at exit"
"$MEMTRACE" report --no-db leak.bin >report.txt 2>err || fail "report: $(cat err)"
for n in $(dj '"|".join(s["name"].replace(" ", "~") for s in f["tensor_sites_at_exit"])' | tr '|' ' '); do
	grep -qF "$(echo "$n" | tr '~' ' ')" report.txt || fail "a tensor site named otherwise than by the report: $n"
done
# the CUDA level: the cache the same on both sides, nothing changed
expect_eq "$(dj 'r["sites_at_exit"], r["devices"][0]["left_at_exit_bytes"]["change"]')" "([], 0)" "CUDA level unchanged"

"$MEMTRACE" diff leak.bin fixed.bin >d.txt 2>err || fail "diff: $(cat err)"
expect_eq "$(grep '^  tensors left at exit' d.txt | tr -s ' ')" " tensors left at exit 20.0 MiB 0 B -20.0 MiB -100.0%" "text: tensors left at exit"
expect_eq "$(sed -n '/^tensor sites left at exit/,$p' d.txt | tr -s ' ')" "tensor sites left at exit, by change:
 -12.0 MiB disappeared 12.0 MiB -> 0 B device 0 py-steps.py:$weights main < py-steps.py:58 <module>
 -8.00 MiB disappeared 8.00 MiB -> 0 B device 0 py-steps.py:$leak step < py-steps.py:46 main < py-steps.py:58 <module>" "text: tensor sites at exit"

st() { "$MEMTRACE" diff "$@" >out 2>err; echo $?; }
expect_eq "$(st leak.bin fixed.bin --fail-if 'tensor_live_at_exit > 0')" 0 "fail-if: the leak went away"
expect_eq "$(st fixed.bin leak.bin --fail-if 'tensor_live_at_exit > 0')" 1 "fail-if: the leak came back"
expect_eq "$(st fixed.bin leak.bin --fail-if 'tensor_peak_allocated > 0')" 0 "fail-if: the peak did not grow"
expect_eq "$(st fixed.bin leak.bin --fail-if 'tensor_left_at_exit_bytes > 19MiB')" 1 "fail-if: the JSON name"
# a run without PyTorch's records against one with them: the section says so
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
TRACE=$T/c.bin traced "$SAMPLES/leak" >/dev/null 2>err || fail "leak: $(cat err)"
"$MEMTRACE" diff c.bin leak.bin >m.txt 2>err || fail "diff mixed: $(cat err)"
grep -qx 'framework: PyTorch (not recorded before, recorded after)' m.txt || fail "mixed: $(grep framework m.txt)"
grep -q '^device 0: only after, no device corresponds$' m.txt || fail "mixed: $(sed -n '/^framework/,$p' m.txt)"
"$MEMTRACE" diff --json c.bin c.bin >n.json 2>err || fail "diff plain: $(cat err)"
expect_eq "$(python3 -c 'import json; print(json.load(open("n.json"))["framework"])')" "None" "no framework: null"
exit 0
