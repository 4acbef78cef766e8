#!/bin/sh
# t646: the categories notes (docs/units.md): a second note for the same
# storages changes nothing; a damaged note (an address inside no tensor
# block, an unreadable line, a line missing) is said in the report, text
# and JSON, and the blocks the first note named keep their category
# (tests/clients/dl-torch.c: twice, damaged).
. "$(dirname "$0")/lib.sh"

split() { # TRACE: the peak's split in MiB, and the notes' counts
	"$MEMTRACE" report --json --no-db "$1" | python3 -c '
import json, sys
M = 1 << 20
d = json.load(sys.stdin)["ranges"]
c = d["framework_peaks"][0]["categories"]
n = d["categories_notes"]
print(" ".join(str(c[k] // M) for k in ("parameters", "gradients", "optimizer_state", "activations",
      "temporaries", "cache")), n["notes"], n["entries"], n["unmatched"], n["unreadable"], n["cut"])'
}
TRACE=$T/twice.bin traced "$CLIENTS/dl-torch" twice 2>/dev/null || fail "dl-torch twice failed"
expect_eq "$(split "$T/twice.bin")" "8 8 16 16 0 16 2 12 0 0 0" "two notes of the same storages"
TRACE=$T/damaged.bin traced "$CLIENTS/dl-torch" damaged 2>/dev/null || fail "dl-torch damaged failed"
expect_eq "$(split "$T/damaged.bin")" "8 8 16 16 0 16 2 8 1 1 1" "a damaged note"
"$MEMTRACE" report --no-db "$T/damaged.bin" >"$T/report" || fail "report failed"
grep -qx "  said: 1 of 8 storages named by categories notes were inside no live tensor block: not counted" "$T/report" ||
	fail "the unmatched entry: $(grep said "$T/report")"
grep -qx "  said: categories notes: 1 line unreadable, 1 note missing a category's line (cut): the storages lost count as activations or temporaries unless another note names them" "$T/report" ||
	fail "the damaged lines: $(grep said "$T/report")"
