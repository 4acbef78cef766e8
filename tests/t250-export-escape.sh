#!/bin/sh
# Hostile strings in every export: the t401 client, run from a file named
# q"b\s<newline>x<0xff>y (stripped, so its frames read module+offset with
# that path) and re-executed with argv[0] = we"ird\0<newline><0xff><tab>,
# stays strings: the Perfetto JSON parses, with the command line as the
# report's JSON writes it; the folded stacks stay one line per site, with
# the newline, the backslash and 0xff as \xNN (as ';' would be); the pickle
# loads, with 0xff as U+00FF.
. "$(dirname "$0")/lib.sh"
command -v strip >/dev/null 2>&1 || skip "strip is not installed"
name=$(printf 'q"b\\s\nx\377y')
cp "$CLIENTS/rt-rob-argv" "$T/$name" || fail "cannot copy the client"
strip "$T/$name" || fail "cannot strip the client"
cd "$T" || exit 1
sim "$MEMTRACE" run --no-summary -o trace.bin -- "./$name" reexec >out 2>err || fail "run failed: $(cat err)"

"$MEMTRACE" export --format perfetto -o p.json trace.bin 2>err || fail "perfetto: $(cat err)"
expect_eq "$(python3 -c 'import json; ev = json.load(open("p.json"))["traceEvents"]; print(repr([e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name" and e["pid"]][0]))' | sed 's/ - pid [0-9]*/ - pid N/')" \
	"'we\"ird\\\\0\\nÿ\\t a b  é \\x01 - pid N'" "perfetto: the command line, parsed back"
grep -q '"we\\"ird\\\\0\\n\\u00ff\\t a b  é \\u0001 - pid [0-9]*"' p.json || fail "perfetto: the command line not escaped as JSON"

"$MEMTRACE" export --format collapsed -o c.txt trace.bin 2>err || fail "collapsed: $(cat err)"
expect_eq "$(wc -l <c.txt)" 1 "collapsed: one line for the one site"
expect_eq "$(sed 's/+0x[0-9a-f]*/+OFF/g' c.txt)" \
	"device 0;q\"b\\x5cs\\x0ax\\xffy+OFF;q\"b\\x5cs\\x0ax\\xffy+OFF 1048576" "collapsed: the frames escaped (the module's base name, as the site's name)"

"$MEMTRACE" export --format torch-snapshot -o t.pickle trace.bin 2>err || fail "torch-snapshot: $(cat err)"
python3 "$ROOT/tests/tools/check-torch-snapshot.py" t.pickle >out 2>&1 || fail "torch-snapshot: $(cat out)"
expect_eq "$(python3 -c 'import pickle; d = pickle.load(open("t.pickle", "rb")); print(repr(d["device_traces"][0][0]["frames"][0]["filename"]))')" \
	"'$T/q\"b\\\\s\\nxÿy'" "torch-snapshot: the module's path, 0xff as U+00FF"
exit 0
