#!/bin/sh
# t285-check-torch: `memtrace check` on a PyTorch run (the torch double
# over the simulated CUDA), in PyTorch's terms, agreeing with the report.
# Figures by hand (tests/torchdouble/py-steps.py's header, n = 8 steps):
#   CUDA level: 40 MiB of segments (12 + 20 + 4 x 2), all of them the
#     caching allocator's, all held at exit: live_at_exit 0 (the cache,
#     40 MiB, is said beside it, not counted), as the report's leak
#     candidates ("none") say
#   tensor_peak_allocated 29 MiB = requested_peak (12 + 9 + 8 x 1)
#   tensor_live_at_exit 20 MiB: the weights (12 MiB, 1 tensor, line L:weights)
#     and the history (8 MiB, 8 tensors, line L:leak), the report's two
#     tensor leak candidates, largest first
#   ooms 0; drain_share: the report's share of the run
# py-steps-fixed.py (the leak fixed): tensor_live_at_exit 0.
# py-oom.py: 1 OOM, verdict fragmentation (8 MiB asked, largest free block
#   5 MiB, 40 MiB cached), its top holder the line L:fill (40 MiB).
# The README's CI recipe (its .memtrace.ini, read from README.md) passes
# on py-steps-fixed.py and fails on py-steps.py, naming line L:leak.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
MiB=1048576
leak=$(grep -n '# L:leak$' "$TD/py-steps.py" | cut -d: -f1)
weights=$(grep -n '# L:weights$' "$TD/py-steps.py" | cut -d: -f1)
fill=$(grep -n '# L:fill$' "$TD/py-oom.py" | cut -d: -f1)

# the programs under the same path, so that their sites compare
mkdir p
cp "$TD/py-steps.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o s.bin -- python3 p/py-steps.py 8 >out 2>err ||
	fail "py-steps failed: $(cat err)"
cp "$TD/py-steps-fixed.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o f.bin -- python3 p/py-steps.py 8 >out 2>err ||
	fail "py-steps-fixed failed: $(cat err)"
cp "$TD/py-steps.py" p/py-steps.py
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o oom.bin -- python3 "$TD/py-oom.py" >out 2>err ||
	fail "py-oom failed: $(cat err)"

# results FILE.json: rule | pass value limit [dev=] [site line]
results() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for x in r["results"]:
    s = x.get("site")
    print(x["rule"], "|", "pass" if x["pass"] else "FAIL", x.get("value", x.get("error")),
          x.get("limit", ""), "dev=%s" % x["device"] if "device" in x else "",
          "site=%s:%s" % (s["file"].split("/")[-1], s["line"]) if s else "")' "$1"
}

"$MEMTRACE" check --json 'live_at_exit <= 0' 'tensor_live_at_exit <= 0' 'tensor_live_at_exit <= 20MiB' \
	'tensor_peak_allocated <= 29MiB' 'tensor_peak_allocated < 29MiB' 'requested_peak[dev0] <= 29MiB' \
	'tensor_peak_allocated[dev1] <= 1GiB' 'ooms == 0' 'oom_fragmentation == 0' s.bin >s.json 2>err
expect_eq "$?" 1 "py-steps: exit status"
expect_eq "$(results s.json)" "live_at_exit <= 0 | pass 0 0 dev=0 
tensor_live_at_exit <= 0 | FAIL $((20 * MiB)) 0 dev=0 site=py-steps.py:$weights
tensor_live_at_exit <= 20MiB | pass $((20 * MiB)) $((20 * MiB)) dev=0 site=py-steps.py:$weights
tensor_peak_allocated <= 29MiB | pass $((29 * MiB)) $((29 * MiB)) dev=0 site=py-steps.py:$weights
tensor_peak_allocated < 29MiB | FAIL $((29 * MiB)) $((29 * MiB)) dev=0 site=py-steps.py:$weights
requested_peak[dev0] <= 29MiB | pass $((29 * MiB)) $((29 * MiB)) dev=0 site=py-steps.py:$weights
tensor_peak_allocated[dev1] <= 1GiB | FAIL PyTorch used no device 1  dev=1 
ooms == 0 | pass 0 0 dev=0 
oom_fragmentation == 0 | pass 0 0 dev=0 " "py-steps: results"
expect_eq "$(python3 -c 'import json; x = json.load(open("s.json"))["results"]
print(x[0]["cache_at_exit"], [(l["line"], l["bytes"], l["count"]) for l in x[1]["tensor_leaks"]])')" \
	"$((40 * MiB)) [($weights, $((12 * MiB)), 1), ($leak, $((8 * MiB)), 8)]" "py-steps: the cache beside live_at_exit; the leak candidates"

# the text names the lines, as the report does
"$MEMTRACE" check 'live_at_exit <= 0' 'tensor_live_at_exit <= 0' s.bin >s.txt 2>err
expect_eq "$?" 1 "py-steps text: exit status"
expect_eq "$(cat s.txt)" "FAIL tensor_live_at_exit <= 0: tensors left at exit 20.0 MiB (20971520 B) on device 0; tensor leak candidates py-steps.py:$weights main < py-steps.py:58 <module> (12.0 MiB, 1 tensor), py-steps.py:$leak step < py-steps.py:46 main < py-steps.py:58 <module> (8.00 MiB, 8 tensors)
memtrace check: 1 of 2 checks failed" "py-steps: text"
# the README shows that line
grep -qxF "$(head -1 s.txt)" "$ROOT/README.md" || fail "README: not the line check prints: $(head -1 s.txt)"
"$MEMTRACE" report --no-db s.bin >report.txt 2>err || fail "report: $(cat err)"
grep -qF "py-steps.py:$leak step < py-steps.py:46 main < py-steps.py:58 <module>" report.txt ||
	fail "the report names the leak otherwise: $(grep -A6 '^tensor leak' report.txt)"

# the fixed program: nothing left, the cache still not a leak
"$MEMTRACE" report --json --no-db f.bin >f.report.json 2>err || fail "report --json: $(cat err)"
fpid=$(python3 -c 'import json; print(json.load(open("f.report.json"))["processes"][0]["pid"])')
"$MEMTRACE" check 'live_at_exit <= 0' 'tensor_live_at_exit <= 0' "tensor_live_at_exit[pid:$fpid] <= 0" f.bin >f.txt 2>err
expect_eq "$?" 0 "py-steps-fixed: exit status ($(cat f.txt err))"
expect_eq "$(cat f.txt)" "memtrace check: all 3 checks passed (3 rules)" "py-steps-fixed: text"

# against the fixed run as baseline, its trace or its report's JSON: the same limits
for base in f.bin f.report.json; do
	"$MEMTRACE" check --json --baseline "$base" 'tensor_peak_allocated <= baseline' 'requested_peak <= baseline' \
		'tensor_live_at_exit <= baseline + 1MiB' 'live_at_exit <= baseline' 'ooms <= baseline' s.bin >b.json 2>err
	expect_eq "$?" 1 "baseline $base: exit status ($(cat err))"
	expect_eq "$(python3 -c 'import json
print([(x["pass"], x["value"], x["baseline"], x["limit"]) for x in json.load(open("b.json"))["results"]])')" \
		"[(True, $((29 * MiB)), $((29 * MiB)), $((29 * MiB))), (True, $((29 * MiB)), $((29 * MiB)), $((29 * MiB))), (False, $((20 * MiB)), 0, $MiB), (True, 0, 0, 0), (True, 0, 0, 0)]" \
		"baseline $base: results"
done

# py-oom: the verdict, named
"$MEMTRACE" check --json 'ooms == 0' 'fragmentation == 0' 'oom_device_full == 0' 'oom_outside == 0' \
	'oom_other_stream == 0' 'ooms[dev0] <= 1' oom.bin >oom.json 2>err
expect_eq "$?" 1 "py-oom: exit status"
expect_eq "$(results oom.json)" "ooms == 0 | FAIL 1 0 dev=0 site=py-oom.py:$fill
oom_fragmentation == 0 | FAIL 1 0 dev=0 site=py-oom.py:$fill
oom_device_full == 0 | pass 0 0 dev=0 
oom_outside == 0 | pass 0 0 dev=0 
oom_other_stream == 0 | pass 0 0 dev=0 
ooms[dev0] <= 1 | pass 1 1 dev=0 site=py-oom.py:$fill" "py-oom: results"
expect_eq "$(python3 -c 'import json; o = json.load(open("oom.json"))["results"][0]["oom"]
print(o["verdict"], o["requested_bytes"], o["largest_free_block_bytes"], o["cached_bytes"])')" \
	"fragmentation $((8 * MiB)) $((5 * MiB)) $((40 * MiB))" "py-oom: the verdict"
"$MEMTRACE" check 'ooms == 0' oom.bin >oom.txt
sed 's/at +[0-9.]* [mu]*s/at T/' oom.txt >oom.got
expect_eq "$(cat oom.got)" "FAIL ooms == 0: PyTorch out-of-memory errors 1 on device 0; at T in pid $(python3 -c 'import json; print(json.load(open("oom.json"))["results"][0]["oom"]["pid"])'): a request of 8.00 MiB failed: fragmentation (cached 40.0 MiB, largest free block 5.00 MiB); top tensor holder py-oom.py:$fill <listcomp> < py-oom.py:$fill fill < py-oom.py:37 main (40.0 MiB)
memtrace check: 1 of 1 check failed" "py-oom: text"

# a run without PyTorch's records has no tensor figure: a failure, not a pass
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
TRACE=$T/leak.bin traced "$SAMPLES/leak" >/dev/null 2>err || fail "leak: $(cat err)"
"$MEMTRACE" check 'tensor_live_at_exit <= 0' leak.bin >nofw.txt 2>err
expect_eq "$?" 1 "no framework: exit status"
expect_eq "$(head -1 nofw.txt)" "FAIL tensor_live_at_exit <= 0: the run has no PyTorch tensor records (docs/torch.md)" "no framework: line"
# drain_share takes a percent of the run, and only that
"$MEMTRACE" check 'drain_share <= 0.5' s.bin >out 2>err
expect_eq "$?:$(cat err)" "2:memtrace: bad rule 'drain_share <= 0.5': drain_share is a share of the run: a percent (drain_share <= 2%)" "drain_share without %"
"$MEMTRACE" check --json 'drain_share <= 100%' 'drain_share > 0%' s.bin >d.json 2>err
expect_eq "$?" 0 "drain_share: exit status ($(cat d.json err))"
"$MEMTRACE" report --json --no-db s.bin >s.report.json 2>err || fail "report --json: $(cat err)"
expect_eq "$(python3 -c 'import json; c = json.load(open("d.json"))["results"][0]; r = json.load(open("s.report.json"))["framework"]["drains"]
print(c["value"] == r["share_of_run"], c["drains"] == r["count"], c["drain_ns"] == r["total_ns"], r["count"] > 0)')" \
	"True True True True" "drain_share: the report's share of the run"

# --- the README's CI recipe, as README.md has it ----------------------------
awk '/^\*\*In CI\.\*\*/ { ci = 1 } ci && /^```ini$/ { on = 1; next } on && /^```$/ { exit } on' \
	"$ROOT/README.md" >.memtrace.ini
grep -q '^tensor_live_at_exit <= 0$' .memtrace.ini || fail "README: no tensor rule in the recipe: $(cat .memtrace.ini)"
cp "$TD/py-steps-fixed.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary --require-trace --check .memtrace.ini -o ci.bin -- \
	python3 p/py-steps.py 8 >ci.out 2>ci.err
expect_eq "$?" 0 "README recipe, no leak: exit status ($(cat ci.out ci.err))"
cp "$TD/py-steps.py" p/py-steps.py
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary --require-trace --check .memtrace.ini -o ci2.bin -- \
	python3 p/py-steps.py 8 >ci.out 2>ci.err
expect_eq "$?" 1 "README recipe, a tensor leak: exit status ($(cat ci.out ci.err))"
grep -q "^FAIL tensor_live_at_exit <= 0: .*py-steps.py:$leak step" ci.out ci.err ||
	fail "README recipe: the leaking line py-steps.py:$leak is not named: $(cat ci.out ci.err)"
grep -q "^FAIL live_at_exit" ci.out ci.err && fail "README recipe: the cache taken for a leak: $(cat ci.out ci.err)"
exit 0
