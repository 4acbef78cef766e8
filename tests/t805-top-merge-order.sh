#!/bin/sh
# The follower merges by the report's order (stream.h's rule) and lets a
# process that ended go from the run's devices where the report's pass
# does: `top --once --json` of a finished run of two PyTorch processes
# equals `memtrace report --json` of the same traces field by field
# (tests/top-json-vs-report.py), the peaks of the run's device included,
# which depend on both. The run, on the torch double: the parent holds a
# 4 MiB tensor (a 20 MiB segment), a spawned worker keeps a 16 MiB one (its
# own 20 MiB segment) and exits with it, then the parent takes 24 MiB more
# (a 24 MiB segment). The worker's memory left the device when it ended, so
# the run's device peaks at 20 + 24 = 44 MiB reserved (not 64 MiB), and the
# framework's at 44 MiB reserved and 28 MiB allocated (not 44 MiB).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
TD=$ROOT/tests/torchdouble
MiB=1048576
cat >order.py <<'PY'
import multiprocessing
import torch

MiB = 1 << 20
kept = []


def worker():
    kept.append(torch.empty(16 * MiB, dtype=torch.uint8, device="cuda"))


if __name__ == "__main__":
    p = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    w = multiprocessing.get_context("spawn").Process(target=worker)
    w.start()
    w.join()
    q = torch.empty(24 * MiB, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
PY
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o run.bin -- python3 order.py >out 2>err ||
	fail "order.py failed: $(cat err)"
[ "$(ls run*.bin | wc -l)" -ge 2 ] || fail "one trace, not two: $(ls)"
"$MEMTRACE" top --once --json run.bin >top.json 2>err || fail "top: $(cat err)"
"$MEMTRACE" report --no-db --json run*.bin >rep.json 2>err || fail "report --json: $(cat err)"
"$MEMTRACE" report --no-db run*.bin >rep.txt 2>err || fail "report: $(cat err)"
python3 "$ROOT/tests/top-json-vs-report.py" top.json rep.json rep.txt >diff ||
	fail "top differs from the report: $(cat diff)"
expect_eq "$(python3 -c 'import json; t = json.load(open("top.json")); print(t["devices"][0]["peak_reserved_bytes"], [(d["peak_reserved_bytes"], d["peak_allocated_bytes"]) for d in t["framework"]["devices"] if d["pid"] is None])')" \
	"$((44 * MiB)) [($((44 * MiB)), $((28 * MiB)))]" "the run's device peaks (by hand)"
exit 0
