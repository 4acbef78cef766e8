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

# the tensor parts: the torch double's py-steps.py and py-oom.py run from
# files named q"b\s<newline>x<0xff>y;z.py (the name in every Python frame)
TD=$ROOT/tests/torchdouble
py=$(printf 'q"b\\s\nx\377y;z')
cp "$TD/py-steps.py" "$T/$py.py" && cp "$TD/py-oom.py" "$T/$py-oom.py" || fail "cannot copy the programs"
PYTHONPATH=$TD sim "$MEMTRACE" run --no-summary -o s.bin -- python3 "./$py.py" 8 >out 2>err || fail "py-steps failed: $(cat err)"
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o o.bin -- python3 "./$py-oom.py" >out 2>err ||
	fail "py-oom failed: $(cat err)"
"$MEMTRACE" export --format collapsed --at peak -o sc.txt s.bin 2>err || fail "collapsed: $(cat err)"
expect_eq "$(wc -l <sc.txt) $(awk '{ s += $NF } END { print s }' sc.txt)" "5 30408704" "collapsed: the five tensor sites at the peak, one line each"
expect_eq "$(head -1 sc.txt)" 'device 0;q"b\x5cs\x0ax\xffy\x3bz.py:58 <module>;q"b\x5cs\x0ax\xffy\x3bz.py:44 main 12582912' \
	"collapsed: the Python file's name escaped, ';' too"
"$MEMTRACE" export --format perfetto --at oom -o op.json o.bin 2>err || fail "perfetto: $(cat err)"
expect_eq "$(python3 -c 'import json, re, sys; ev = json.load(open("op.json"))["traceEvents"]; st = [e["args"]["stack"] for e in ev if e.get("cat") == "framework_oom"][0]; print(any(re.fullmatch(re.escape("main (" + sys.argv[1] + "/./" + __import__("os").fsencode(sys.argv[2]).decode("latin-1") + "-oom.py:") + "[0-9]+[)]", x) for x in st), len([e for e in ev if e.get("cat") == "memtrace_at"]))' "$T" "$py")" \
	"True 2" "perfetto: the OOM's frames parsed back, the moment's markers"
"$MEMTRACE" export --format torch-snapshot --at oom -o ot.pickle o.bin 2>err || fail "torch-snapshot: $(cat err)"
python3 "$ROOT/tests/tools/check-torch-snapshot.py" ot.pickle >out 2>&1 || fail "torch-snapshot: $(cat out)"
expect_eq "$(python3 -c 'import pickle; d = pickle.load(open("ot.pickle", "rb")); print(repr(sorted(set(f["filename"] for s in d["segments"] for b in s["blocks"] for f in b["frames"] if f["line"] == 33))))')" \
	"['$T/./q\"b\\\\s\\nxÿy;z-oom.py']" "torch-snapshot: the blocks' Python file, 0xff as U+00FF"
exit 0
