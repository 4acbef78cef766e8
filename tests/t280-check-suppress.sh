#!/bin/sh
# t280-check-suppress: suppressions (leak:GLOB on a frame's function, file
# or module) take exactly the suppressed bytes out of live_at_exit: the
# leak sample leaves 20 MiB in 10 blocks from keep_loss(), so suppressing
# keep_loss hides 20 MiB and the rule passes; one matching nothing hides 0.
# Rules and suppressions also come from an INI file (libinih), with the
# same syntax, ./.memtrace.ini by default.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES/leak (make tests-build)"
command -v python3 >/dev/null 2>&1 || skip "no python3"
MiB=1048576

traced "$SAMPLES/leak" >/dev/null 2>"$T/err" || fail "leak failed: $(cat "$T/err")"

# sj FILE EXPR: EXPR in python over the JSON r
sj() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); x = r["results"]; s = r["suppressions"]
print(eval(sys.argv[2]))' "$1" "$2"
}

# by function name, by file (base name or path), by module (path glob): each
# hides the 20 MiB (only keep_loss's blocks are live at exit)
for supp in leak:keep_loss 'leak:keep_*' 'leak:leak.c' 'leak:samples/*.c' 'leak:*/build/samples/leak'; do
	"$MEMTRACE" check --json -s "$supp" "live_at_exit <= 0" "$T/trace.bin" >"$T/s.json"
	rc=$?
	expect_eq "$rc" 0 "$supp: exit status"
	expect_eq "$(sj "$T/s.json" '(x[0]["value"], x[0]["suppressed"], s[0]["bytes"], s[0]["blocks"])')" \
		"(0, $((20 * MiB)), $((20 * MiB)), 10)" "$supp: value, suppressed, hidden bytes and blocks"
done
# a suppression matching no frame hides nothing, and says so
"$MEMTRACE" check --json -s leak:no_such_function -s leak:keep_loss "live_at_exit <= 0" \
	"$T/trace.bin" >"$T/s.json"
expect_eq "$?" 0 "two suppressions: exit status"
expect_eq "$(sj "$T/s.json" '[(e["suppression"], e["bytes"], e["blocks"]) for e in s]')" \
	"[('leak:no_such_function', 0, 0), ('leak:keep_loss', $((20 * MiB)), 10)]" "two suppressions"
# a suppression that does not match keeps the rule failing, figure intact
"$MEMTRACE" check -s leak:alloc_weights "live_at_exit <= 0" "$T/trace.bin" >"$T/s.txt"
expect_eq "$?" 1 "unrelated suppression: exit status"
expect_eq "$(cat "$T/s.txt")" "FAIL live_at_exit <= 0: live at exit 20.0 MiB (20971520 B) on device 0; top site keep_loss (leak.c:54) < main (leak.c:76) (20.0 MiB)
suppressed leak:alloc_weights: 0 B in 0 blocks
memtrace check: 1 of 1 check failed" "unrelated suppression: text"
# the passing line says what each suppression hid
"$MEMTRACE" check -s leak:keep_loss "live_at_exit <= 0" "$T/trace.bin" >"$T/s.txt"
expect_eq "$(cat "$T/s.txt")" "memtrace check: all 1 check passed (1 rule); leak:keep_loss hid 20.0 MiB in 10 blocks" \
	"passing line"

# --- the INI file -------------------------------------------------------------
cat >"$T/rules.ini" <<'INI'
; memory rules for CI
[rules]
peak <= 112MiB
peak[dev0] <= 112MiB
failures == 0
live_at_exit <= 0

[suppressions]
# the loss history is kept until exit on purpose
leak:keep_loss
INI
"$MEMTRACE" check --json --rules "$T/rules.ini" "$T/trace.bin" >"$T/ini.json"
expect_eq "$?" 0 "ini: exit status"
expect_eq "$(sj "$T/ini.json" '[(e["rule"], e["value"]) for e in x]')" \
	"[('peak <= 112MiB', $((112 * MiB))), ('peak[dev0] <= 112MiB', $((112 * MiB))), ('failures == 0', 0), ('live_at_exit <= 0', 0)]" \
	"ini: rules as written"
# ./.memtrace.ini when no rule is given; a rule given replaces it
mkdir "$T/proj"
sed 's/^leak:keep_loss/leak:nothing/' "$T/rules.ini" >"$T/proj/.memtrace.ini"
(cd "$T/proj" && "$MEMTRACE" check "$T/trace.bin" >"$T/def.txt")
expect_eq "$?" 1 ".memtrace.ini: exit status"
grep -q '^FAIL live_at_exit <= 0: live at exit 20.0 MiB' "$T/def.txt" || fail ".memtrace.ini: $(cat "$T/def.txt")"
(cd "$T/proj" && "$MEMTRACE" check "peak <= 1GiB" "$T/trace.bin" >/dev/null)
expect_eq "$?" 0 "a rule given: .memtrace.ini not read"
# a broken file: exit 2 with the file and what is wrong
printf '[rules]\npeak <= lots\n' >"$T/bad.ini"
"$MEMTRACE" check --rules "$T/bad.ini" "$T/trace.bin" >/dev/null 2>"$T/bad.err"
expect_eq "$?" 2 "bad ini: exit status"
expect_eq "$(cat "$T/bad.err")" "memtrace: $T/bad.ini:2: bad rule 'peak <=lots': 'lots' is not a number: expected a size (8GiB, 512MiB, 0), a count, or baseline [+|- N[%|unit]]" \
	"bad ini: message"
printf '[limits]\npeak <= 1GiB\n' >"$T/bad.ini"
"$MEMTRACE" check --rules "$T/bad.ini" "$T/trace.bin" >/dev/null 2>"$T/bad.err"
expect_eq "$?" 2 "unknown section: exit status"
exit 0
