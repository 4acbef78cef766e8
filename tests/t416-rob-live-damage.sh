#!/bin/sh
# t416-rob-live-damage: the live follower (memtrace top without --once on
# a trace, --dir, the metrics of run --top) checks records as it reads them,
# by the reader's rules (issue 25 row 1). Before, a bad record ended its
# slab without a word, a second exit record or a slab copied twice went
# by, and the figures (a process "killed") were of a trace report refuses.
# Now: report's own line as a warning, said once, the figures stopping
# before the damage (the process "damaged"); a trace the reader loads with
# a warning gets that warning.
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-threads" ] || skip "no $CLIENTS/rt-threads (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
traced "$CLIENTS/rt-threads" 2 200 >/dev/null 2>err || fail "rt-threads failed: $(cat err)"
mkdir bad dup ok
cp trace.bin ok/trace.bin
# bad: the record in the middle of slab 0 (the main thread's events) made
# a long record of size 0 (corrupt); dup: slab 1 appended
python3 - <<'PY' || fail "cannot make the copies"
import struct
d = open("trace.bin", "rb").read()
hs, ss = struct.unpack_from("<II", d, 12)
open("dup/trace.bin", "wb").write(d + d[hs + ss:hs + 2 * ss])
starts, pos = [], hs + 16
while d[pos]:                 # slab 0's records (fuzz2.py's slabs() walk)
    starts.append(pos)
    b = d[pos]
    pos += 1 + (b & 0x7f) if b & 0x80 else (d[pos + 1] * 8 or struct.unpack_from("<I", d, pos + 4)[0])
at = starts[len(starts) // 2]
b = bytearray(d)
b[at:at + 8] = bytes([0x7f, 0, 0, 0, 0, 0, 0, 0])
open("bad/trace.bin", "wb").write(bytes(b))
PY

"$MEMTRACE" report --no-db bad/trace.bin >/dev/null 2>report.err
expect_eq "$?" 1 "report of bad: exit status"
line=$(sed "s|^memtrace: 'bad/trace.bin'|'PATH'|" report.err)
case "$line" in "'PATH': corrupt "*) ;; *) fail "report of bad: $(cat report.err)" ;; esac
"$MEMTRACE" top --once --bytes --dir bad >live.out 2>live.err
expect_eq "$?" 0 "live of bad: exit status (figures up to the damage)"
expect_eq "$(sed "s|^memtrace: warning: 'bad/trace.bin'|'PATH'|" live.err)" \
	"$line: \`memtrace report\` refuses this trace; its figures here stop before the damage" \
	"live of bad: report's line, once"
grep -q ' damaged ' live.out || fail "live of bad: the process is not damaged: $(cat live.out)"
# not a figure of what comes after the damage: fewer events than the trace
n_ok=$("$MEMTRACE" top --once --json --dir ok | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
n_bad=$("$MEMTRACE" top --once --json --dir bad 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
[ "$n_bad" -lt "$n_ok" ] || fail "live of bad: $n_bad records of $n_ok, none should come after the damage"

"$MEMTRACE" report --no-db dup/trace.bin >/dev/null 2>report.err
expect_eq "$?" 0 "report of dup: exit status"
"$MEMTRACE" top --once --bytes --dir dup >live.out 2>live.err
expect_eq "$?" 0 "live of dup: exit status"
expect_eq "$(sed "s|'dup/trace.bin'|'X'|" live.err)" "$(sed "s|'dup/trace.bin'|'X'|" report.err)" \
	"live of dup: report's warning"
"$MEMTRACE" top --once --bytes --dir ok >live.out 2>live.err
expect_eq "$(cat live.err)" "" "live of the trace: no warning"
exit 0
