#!/bin/sh
# t415-rob-dup-fw-slab: a framework's slab copied twice into a trace (issue
# 25, row 9). FW events come in batches of the past, so a framework's slabs
# of one thread may overlap in time and t410's rule leaves them out; but
# the recorder writes each batch once, so two of them that start at the
# same time with the same bytes are one slab copied twice. dl-fwgen split
# writes 8 FW events in one slab of their own (the one that starts with a
# compact record); with it appended, every reader warns as t410's copy
# does, and check fails on it. Before: no word, and the report counted the
# framework's events twice.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/dl-fwgen" ] || skip "no $CLIENTS/dl-fwgen (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
traced "$CLIENTS/dl-fwgen" split >/dev/null 2>err || fail "dl-fwgen failed: $(cat err)"
expect_eq "$("$MEMTRACE" dump trace.bin | grep -c '^fw_event ')" 8 "FW events in the trace"

# the copy: the slab of FW events appended; "TID" on stdout
ROOT=$ROOT python3 - >dup.txt <<'PY' || fail "no slab of FW events alone"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ['ROOT'], 'tests', 'fuzz'))
from fuzz2 import slabs
d = open('trace.bin', 'rb').read()
hs, sl = slabs(d)
for off, size, claimed, end, fw in sl:
    # a compact record first: FW events, no FW_STACK or FW_INFO (a second
    # FW_STACK of an id is refused already)
    if claimed and fw and d[off + 16] & 0x80 and size == struct.unpack_from('<I', d, 16)[0]:
        open('dup.bin', 'wb').write(d + d[off:off + size])
        print(struct.unpack_from('<I', d, off + 4)[0])
        sys.exit(0)
sys.exit(1)
PY
read -r TID <dup.txt
over="'dup.bin': 1 slab of thread $TID overlaps an earlier one in time (a slab copied twice?): its events may count twice"

"$MEMTRACE" report --no-db trace.bin >good.txt 2>err
expect_eq "$?" 0 "report of the trace: exit status"
expect_eq "$(cat err)" "" "report of the trace: no warning"
for c in report dump; do
	"$MEMTRACE" $c $([ $c = report ] && echo --no-db) dup.bin >out 2>err
	expect_eq "$?" 0 "$c of the copy: exit status"
	expect_eq "$(cat err)" "memtrace: warning: $over" "$c of the copy: the warning"
done
expect_eq "$("$MEMTRACE" dump dup.bin 2>/dev/null | grep -c '^fw_event ')" 16 "FW events in the copy (read twice)"
"$MEMTRACE" report --no-db dup.bin >dup.txt 2>/dev/null
grep -qxF "      warning: $over" dup.txt || fail "report: no overlap line: $(head -6 dup.txt)"
"$MEMTRACE" check "peak <= 1TiB" dup.bin >out 2>err
expect_eq "$?" 1 "check of the copy: exit status"
expect_eq "$(head -n 1 out)" "FAIL trace intact: $over" "check of the copy: the line"
exit 0
