#!/bin/sh
# Python runs that skip memtrace's bootstrap (-E ignores PYTHONPATH, -S
# skips site) are left alone, and the trace says why PyTorch's tensors are
# missing: the recorder writes one torch=off note at exit, the report shows
# it. Without MEMTRACE_TORCH (--no-torch) there is no note.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
cp -r "$ROOT/tests/torchdouble/torch" . || fail "cannot copy the torch double"
cat >prog.py <<'PY'
import torch
x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
print("prog: ok")
PY
for o in -E -S; do
	sim "$MEMTRACE" run --no-summary -o "t$o.bin" -- python3 $o prog.py >out 2>err || fail "python3 $o failed: $(cat err)"
	expect_eq "$(cat out)" "prog: ok" "python3 $o: output"
	expect_eq "$("$MEMTRACE" dump "t$o.bin" | grep -c '^fw_event ')" 0 "python3 $o: no framework events"
	expect_eq "$("$MEMTRACE" dump "t$o.bin" | grep '^fw_info ' | sed 's/.*text=//')" \
		"\"framework=torch\\ntorch=off\\nreason=python $o: PYTHONPATH or site ignored, so memtrace's bootstrap did not run\\n\"" \
		"python3 $o: the note"
	"$MEMTRACE" report --no-db "t$o.bin" >text || fail "report failed"
	grep -q "^note: pid [0-9]*: PyTorch's tensors were not recorded: python $o: PYTHONPATH or site ignored" text ||
		fail "python3 $o: the report does not say why: $(cat text)"
done
"$MEMTRACE" report --no-db --json t-E.bin >json || fail "report --json failed"
expect_eq "$(python3 -c 'import json; print(json.load(open("json"))["processes"][0]["framework_off"])')" \
	"python -E: PYTHONPATH or site ignored, so memtrace's bootstrap did not run" "JSON: framework_off"
sim "$MEMTRACE" run --no-summary --no-torch -o n.bin -- python3 -E prog.py >out 2>err || fail "--no-torch failed"
expect_eq "$("$MEMTRACE" dump n.bin | grep -c '^fw_info ')" 0 "--no-torch: no note"
exit 0
