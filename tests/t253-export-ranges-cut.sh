#!/bin/sh
# t253: the Perfetto export never cuts the program's ranges silently
# (docs/export.md): its slices and marks come from the ranges model's log
# (model/ranges.h), which keeps the first RG_MAX_MARKS (100,000) marks.
# A Python program marks "tick" 100,003 times (memtrace.mark) inside one
# phase: the export has 100,000 mark instants, the report counts 100,003,
# and both the trace (a global instant, cat "memtrace") and stderr (a
# warning) say "100000 of 100003 marks shown (the first 100000)"; the one
# range instance is whole, so no instance is said to be left out. A run
# under the caps (50 marks) exports no such event and warns nothing.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
cat >ticks.py <<'PY'
import sys
import memtrace
n = int(sys.argv[1])
with memtrace.phase("loop"):
    for _ in range(n):
        memtrace.mark("tick")
PY
for n in 100003 50; do
	TRACE=$T/t$n.bin traced python3 ticks.py $n 2>err || fail "ticks.py $n: $(cat err)"
	"$MEMTRACE" report --json --no-db t$n.bin >t$n.json 2>err || fail "report $n: $(cat err)"
	"$MEMTRACE" export --format perfetto -o t$n.pf t$n.bin 2>t$n.err || fail "export $n: $(cat t$n.err)"
done
expect_eq "$(cat t100003.err)" "memtrace: warning: 100000 of 100003 marks shown (the first 100000)" "the warning of the cut"
expect_eq "$(cat t50.err)" "" "no warning under the caps"
python3 - <<'PY' || fail "perfetto marks"
import json, sys
def check(what, got, want):
    if got != want:
        print("FAIL: %s: got %r, expected %r" % (what, got, want)); sys.exit(1)
for n, shown, cut in ((100003, 100000, ["100000 of 100003 marks shown (the first 100000)"]), (50, 50, [])):
    rep = json.load(open("t%d.json" % n))["ranges"]
    ev = json.load(open("t%d.pf" % n))["traceEvents"]
    check("report's marks", (rep["marks"], rep["instances"]), (n, 1))
    check("mark instants", len([e for e in ev if e["ph"] == "i" and e.get("cat") == "mark"]), shown)
    check("the cut said", [(e["name"], e["s"], e["pid"]) for e in ev if e.get("cat") == "memtrace"],
          [(c, "g", 0) for c in cut])
    check("the range", [e["name"] for e in ev if e["ph"] == "X"], ["loop"])
PY
exit 0
