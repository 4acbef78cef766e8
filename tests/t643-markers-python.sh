#!/bin/sh
# t643: memtrace's Python marker API (python/memtrace.py): phases, steps,
# marks and start/end ranges around ctypes cudaMalloc calls
# (tests/clients/py-markers.py, its header works the figures out) give the
# report's ranges section exactly, text and JSON; the records are of origin
# "python"; under `memtrace run` `import memtrace` needs no PYTHONPATH; the
# same program without memtrace runs unchanged, every call a no-op.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
PROG=$ROOT/tests/clients/py-markers.py
MiB=1048576
cd "$T" || exit 1

# without memtrace: the module alone on the path, nothing recorded
mkdir lib && cp "$ROOT/python/memtrace.py" lib/
out=$(PYTHONPATH=$T/lib sim python3 "$PROG" 2>err) || fail "py-markers without memtrace: $(cat err)"
expect_eq "$out" "active False push -1 -1 pop-with-none -1 start 0" "no-op answers without memtrace"
grep -c '^alloc ' calls.log >plain.allocs

# under memtrace: no PYTHONPATH of the test's own
rm -f calls.log
out=$(traced python3 "$PROG" 2>err) || fail "py-markers under memtrace: $(cat err)"
expect_eq "$out" "active True push 0 1 pop-with-none -1 start id" "answers under memtrace"
expect_eq "$(grep -c '^alloc ' calls.log)" "$(cat plain.allocs)" "the same allocations with and without memtrace"
"$MEMTRACE" dump trace.bin | grep '^range' >ranges.dump
[ -s ranges.dump ] || fail "no range record"
expect_eq "$(grep -vc 'origin=python' ranges.dump)" "0" "every range record of origin python"

"$MEMTRACE" report --no-db trace.bin >text 2>err || fail "report failed: $(cat err)"
alloc=$(grep -n '# L:alloc$' "$PROG" | cut -d: -f1)
keep=$(grep -n '# L:keep$' "$PROG" | cut -d: -f1)
sed -n '/^ranges and steps/,/^$/p' text | sed -e 's/ at +[0-9.]* [mu]*s$/ at T/' -e 's/(site [0-9]*)/(site S)/' \
	-e 's/(first on thread [0-9]*)/(first on thread N)/' -e '/^$/d' >section
expect_eq "$(cat section)" "ranges and steps (NVTX, memtrace's markers): 12 range instances of 9 ranges, 1 mark
  peak 16.0 MiB reserved in range 'forward' (step 2) at T
  range                            instances         peak held at start  step of the peak
  step N                                   2     16.0 MiB     7.00 MiB  step 2
  forward                                  2     16.0 MiB     8.00 MiB  step 2
  app:eval                                 1     13.0 MiB     8.00 MiB  -
  backward                                 2     11.0 MiB     8.00 MiB  step 2
  io:prefetch                              1     10.0 MiB     8.00 MiB  -
  save                                     1     9.00 MiB     8.00 MiB  -
  outer                                    1     8.00 MiB     8.00 MiB  -
  inner                                    1     8.00 MiB     8.00 MiB  -
  load                                     1     6.00 MiB     4.00 MiB  -
  steps: 2 instances of 'step N'
    step 1      peak   15.0 MiB  at its end   7.00 MiB
    step 2      peak   16.0 MiB  at its end   8.00 MiB
  growth: reserved at a step's end grows 1.00 MiB a step; the first step's peak is -1.00 MiB against the others' median
    grows 1.00 MiB a step from alloc (py-markers.py:$alloc) < <module> (py-markers.py:$keep) (site S), steps 1-2
  said: 1 pop with no range open on its thread and domain (first on thread N): left out" \
	"the report's ranges section"

"$MEMTRACE" report --json --no-db trace.bin >json 2>err || fail "report --json failed: $(cat err)"
python3 - json <<'PY' || fail "the JSON's ranges"
import json, sys
M = 1 << 20
d = json.load(open(sys.argv[1]))["ranges"]
r = {x["range"]: (x["instances"], x["peak_reserved"] // M) for x in d["ranges"]}
want = {"load": (1, 6), "step N": (2, 16), "forward": (2, 16), "backward": (2, 11),
        "app:eval": (1, 13), "save": (1, 9), "io:prefetch": (1, 10), "outer": (1, 8), "inner": (1, 8)}
assert r == want, r
s = [(x["step"], x["reserved_at_start"] // M, x["peak_reserved"] // M, x["reserved_at_end"] // M) for x in d["steps"]]
assert s == [(1, 6, 15, 7), (2, 7, 16, 8)], s
assert d["marks"] == 1 and d["misuse"]["pops_unmatched"] == 1, d
assert d["growth"]["reserved_per_step"] == M, d["growth"]
p = [(x["range"], x["step"], x["reserved_bytes"] // M) for x in d["peaks"]]
assert p == [("forward", 2, 16)], p
PY
exit 0
