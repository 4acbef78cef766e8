#!/bin/sh
# t284-check-rules-file-lines: the rules file's lines are read whole,
# whatever their length (issue 25, row 5): libinih's 200-byte buffer split
# a long line, so that a long comment's tail became a rule and a long
# suppression was refused with the wrong line number. A long comment stays
# a comment, a long glob is kept whole, a long bad rule is refused with its
# own line number; a NUL byte is refused with its line, not taken for the
# end of the line.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"
cd "$T" || exit 1

# a comment of 300 bytes whose tail reads as a rule that would fail, one of
# 100 kB, a rule padded to 5000 bytes, a suppression of 6000 bytes
python3 - <<'PY'
long_glob = "*keep_loss" + "*" * 6000
open("long.ini", "w").write(
    "[rules]\n"
    "# " + "x" * 300 + " peak <= 0\n"
    "; " + "y" * 100000 + " failures == 1\n"
    "live_at_exit <= 0" + " " * 5000 + "\n"
    "[suppressions]\n"
    "leak:" + long_glob + "\n")
open("bad.ini", "w").write(
    "[rules]\n"
    "# " + "c" * 500 + "\n"
    "peak <= 112MiB\n"
    "peak <= " + "9" * 300 + "\n")
open("badsupp.ini", "w").write(
    "[rules]\npeak <= 112MiB\n# " + "c" * 250 + "\n[suppressions]\n"
    "leak:" + "a" * 300 + "\n"
    "lek:" + "b" * 300 + "\n")
open("nul.ini", "wb").write(b"[rules]\npeak <= 112MiB\nfailures == 0\0 peak <= 0\n")
open("nul2.ini", "wb").write(b"[rules]\npeak <= 112MiB\n[suppressions]\nleak:keep\0_loss\n")
PY

"$MEMTRACE" check --json --rules long.ini trace.bin >long.json 2>err
expect_eq "$?" 0 "long lines: exit status ($(cat err))"
expect_eq "$(python3 -c 'import json, sys
j = json.load(open("long.json"))
print([x["rule"] for x in j["results"]], [(len(s["suppression"]), s["blocks"]) for s in j["suppressions"]])')" \
	"['live_at_exit <= 0'] [(6015, 10)]" "long lines: one rule, the whole glob hiding the leak"

"$MEMTRACE" check --rules bad.ini trace.bin >out 2>err
expect_eq "$?" 2 "a long bad rule: exit status"
grep -q "^memtrace: bad.ini:4: bad rule 'peak <=9999.*' is out of range (below 16 EiB, 2^64 bytes)$" err ||
	fail "a long bad rule: $(cut -c1-200 err)"

"$MEMTRACE" check --rules badsupp.ini trace.bin >out 2>err
expect_eq "$?" 2 "a long bad suppression: exit status"
grep -q "^memtrace: badsupp.ini:6: " err || fail "a long bad suppression: $(cut -c1-200 err)"

"$MEMTRACE" check --rules nul.ini trace.bin >out 2>err
expect_eq "$?" 2 "NUL byte in a rule: exit status"
expect_eq "$(cat err)" "memtrace: nul.ini:3: a NUL byte in the line (a rules file is text)" "NUL byte in a rule: message"
"$MEMTRACE" check --rules nul2.ini trace.bin >out 2>err
expect_eq "$?" 2 "NUL byte in a suppression: exit status"
expect_eq "$(cat err)" "memtrace: nul2.ini:4: a NUL byte in the line (a rules file is text)" "NUL byte in a suppression: message"
# memtrace run --check refuses it before the program runs
sim "$MEMTRACE" run --no-summary -o run.bin --check nul.ini -- true >out 2>err
expect_eq "$?" 2 "run --check with a NUL byte: exit status"
[ -e run.bin ] && fail "run --check with a bad rules file ran the program"
exit 0
