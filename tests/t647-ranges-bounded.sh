#!/bin/sh
# t647: the ranges model's memory does not grow with the number of
# instances (docs/units.md "What it costs"): 200,000 push/pop pairs
# (rt-nvtx many) are one range of 200,000 instances, and the report's
# peak memory is within 10 MB of its memory on a trace of 12 instances
# (rt-nvtx train); keeping every instance (about 150 bytes each) took
# 30 MB more.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"
[ -x /usr/bin/time ] || skip "no /usr/bin/time"

TRACE=$T/many.bin traced "$CLIENTS/rt-nvtx" many 200000 2>/dev/null || fail "rt-nvtx many failed"
TRACE=$T/train.bin traced "$CLIENTS/rt-nvtx" train 2>/dev/null || fail "rt-nvtx train failed"
"$MEMTRACE" report --json --no-db "$T/many.bin" | python3 -c '
import json, sys
d = json.load(sys.stdin)["ranges"]
r = [(x["range"], x["instances"]) for x in d["ranges"]]
assert d["instances"] == 200000 and r == [("tiny", 200000)], (d["instances"], r)
' || fail "the figures of 200,000 instances"
rss() { /usr/bin/time -f %M "$MEMTRACE" report --no-db "$1" 2>&1 >/dev/null | tail -n 1; }
many=$(rss "$T/many.bin")
train=$(rss "$T/train.bin")
[ $((many - train)) -lt 10240 ] ||
	fail "the report took $many KB on 200,000 instances, $train KB on 12: more than 10 MB more"
