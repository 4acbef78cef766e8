#!/bin/sh
# t410-rob-dup-slab: a slab copied twice into a trace (issue 25, row 9)
# doubled that thread's events without a word, and the frees that then
# match no allocation were counted only in the JSON. Now every reader
# warns that slabs of one thread overlap in time, the text report says it
# under the process with its unknown frees, and check fails on it; the
# trace as written has none of these lines.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-threads" ] || skip "no $CLIENTS/rt-threads (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
traced "$CLIENTS/rt-threads" 2 5000 >/dev/null 2>err || fail "rt-threads failed: $(cat err)"

# a copy with the fullest slab of a worker thread (not slab 0's thread)
# appended: "TID SLAB" on stdout. The fullest: one of its own, with frees
# in it (a young slab, shared, may hold one alloc of its first owner's:
# its copy is told by its bytes, test-analyze-reader's test_overlaps)
python3 - >dup.txt <<'PY' || fail "no worker slab to copy"
import struct, sys
d = open("trace.bin", "rb").read()
hs, ss = struct.unpack_from("<II", d, 12)
n = (len(d) - hs) // ss
tid0 = struct.unpack_from("<I", d, hs + 4)[0]
best = None
for k in range(1, n):
    tid = struct.unpack_from("<I", d, hs + k * ss + 4)[0]
    used = len(d[hs + k * ss:hs + (k + 1) * ss].rstrip(b"\0"))
    if tid != tid0 and (best is None or used > best[0]):
        best = (used, tid, k)
if best is None:
    sys.exit(1)
_, tid, k = best
open("dup.bin", "wb").write(d + d[hs + k * ss:hs + (k + 1) * ss])
print(tid, k)
PY
read -r TID SLAB <dup.txt
over="'dup.bin': 1 slab of thread $TID overlaps an earlier one in time (a slab copied twice?): its events may count twice"

"$MEMTRACE" report --no-db trace.bin >good.txt 2>err
expect_eq "$?" 0 "report of the trace: exit status"
expect_eq "$(cat err)" "" "report of the trace: no warning"
grep -q "warning:" good.txt && fail "report of the trace: $(grep warning: good.txt)"

for c in report dump; do
	"$MEMTRACE" $c $([ $c = report ] && echo --no-db) dup.bin >out 2>err
	expect_eq "$?" 0 "$c of the copy: exit status"
	expect_eq "$(cat err)" "memtrace: warning: $over" "$c of the copy: the warning"
done
"$MEMTRACE" report --no-db dup.bin >dup.txt 2>/dev/null
grep -qxF "      warning: $over" dup.txt || fail "report: no overlap line: $(head -6 dup.txt)"
grep -q "^      warning: [0-9]* frees\{0,1\} of an address no traced allocation holds (allocated before tracing began, or records lost)$" dup.txt ||
	fail "report: no unknown frees line: $(head -6 dup.txt)"
"$MEMTRACE" check "peak <= 1TiB" dup.bin >out 2>err
expect_eq "$?" 1 "check of the copy: exit status"
expect_eq "$(cat out)" "FAIL trace intact: $over
memtrace check: 1 of 2 checks failed" "check of the copy: the lines"
"$MEMTRACE" check "peak <= 1TiB" trace.bin >out 2>err
expect_eq "$?" 0 "check of the trace: exit status"
exit 0
