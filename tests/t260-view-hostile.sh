#!/bin/sh
# t260-view-hostile: strings of a trace render as text in the page of
# `memtrace view`, never as markup or script. t401's client (argv with a
# quote, a newline, 0xff and a control byte), built here from a source file
# whose name holds '<b id="inj1">' and "'" (the frames' file names) and run
# from an executable at '.../</script><b id="inj2">"q', newline, 0xff (the
# processes' exe and the modules' paths): headless Chromium runs the page
# without a script error, the DOM holds no element made from those strings
# and shows them as text.
. "$(dirname "$0")/lib.sh"
command -v chromium >/dev/null 2>&1 || skip "no chromium (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

src='h'"'"'<b id="inj1">.c'
cp "$ROOT/tests/clients/rt-rob-argv.c" "$T/$src" || fail "cannot copy the source"
mkdir "$T/<" || exit 1
exe=$(printf '</script><b id="inj2">"q\n\377')       # a file 'script>...' in '<'
cc -g -O0 -I"$ROOT/tests/clients" -I"$ROOT/include" -I"$CUDA_HOME/include" "$T/$src" -o "$T/$exe" \
	-L"$B/simcuda/runtime" -lcudart 2>cc.err || fail "cannot build the client: $(cat cc.err)"
sim "$MEMTRACE" run --no-summary -o trace.bin -- "./$exe" reexec >out 2>err || fail "run failed: $(cat err)"
expect_eq "$(cat out)" "5 args" "client output"
"$MEMTRACE" view -o page.html trace.bin >/dev/null 2>err || fail "view failed: $(cat err)"
grep -c 'inj' page.html >/dev/null || fail "the strings are not in the page"
timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom page.html >dom 2>chrome.err || fail "chromium failed: $(tail -n 5 chrome.err)"

python3 - dom <<'PY' || fail "hostile strings"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
check = html.unescape(re.search(r'<pre id="memtrace-check"[^>]*>(.*?)</pre>', dom, re.S).group(1))
assert "errors 0" in check.splitlines(), check
assert "done 1" in check.splitlines(), check
assert "sites 1" in check.splitlines() and "processes 1" in check.splitlines(), check
# no element from a trace string: the only <b> elements would be injected
assert not re.search(r'<b[\s>]', dom), "an injected <b> element"
assert not re.search(r'<[A-Za-z][^<>]*id="inj', dom), "an injected id"
assert dom.count("<script") == 3, "scripts in the DOM: %d" % dom.count("<script")
# and the strings are there as text: the site's file (the sites table) and
# the executable (processes table), escaped by the DOM serializer
assert '&lt;b id="inj1"&gt;.c:' in dom, "the source file name is not shown as text"
assert '&lt;/script&gt;&lt;b id="inj2"&gt;"q' in dom, "the executable is not shown as text"
assert 'we"ird\\0' in dom, "argv[0] is not shown"
PY

# the PyTorch sections (tensor sites by Python line: peak tables, leaks,
# the icicle, the tensor address map's legend, an OOM's holders): a
# program of the torch double in a file named '<b id="inj3">.py' whose
# function is named '</script><b id="inj4">', keeping a tensor (a tensor
# leak candidate) and asking more than the device has (an OOM)
TD=$ROOT/tests/torchdouble
py='h<b id="inj3">.py'
cat >"$py" <<'PYSRC'
import torch
MiB = 1 << 20
def f(n):
    return torch.empty(n * MiB, dtype=torch.uint8, device="cuda")
f.__code__ = f.__code__.replace(co_name='</script><b id="inj4">')
kept = [f(8) for _ in range(4)]
try:
    f(4096)
except Exception as e:
    print("oom", type(e).__name__)
PYSRC
PYTHONPATH=$TD SIMCUDA_MEM=380M sim "$MEMTRACE" run --no-summary -o fw.bin -- python3 "./$py" >fw.out 2>fw.err ||
	fail "the torch program failed: $(cat fw.err)"
"$MEMTRACE" view -o fw.html fw.bin >/dev/null 2>err || fail "view of fw.bin: $(cat err)"
timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom fw.html >fw.dom 2>chrome.err || fail "chromium failed: $(tail -n 5 chrome.err)"
python3 - fw.dom <<'PY' || fail "hostile strings in the PyTorch sections"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
check = html.unescape(re.search(r'<pre id="memtrace-check"[^>]*>(.*?)</pre>', dom, re.S).group(1)).splitlines()
assert "errors 0" in check and "done 1" in check, check
assert "tensor_leaks 1" in check and "fw_ooms 1" in check, check
assert not re.search(r'<b[\s>]', dom), "an injected <b> element"
assert not re.search(r'<[A-Za-z][^<>]*id="inj', dom), "an injected id"
assert dom.count("<script") == 3, "scripts in the DOM: %d" % dom.count("<script")
# the tensor site's name, as text, in the peak table, the leak table and
# the tensor sites table (and the icicle's boxes)
name = '&lt;b id="inj3"&gt;.py:4 &lt;/script&gt;&lt;b id="inj4"&gt;'
assert dom.count(name) >= 4, "the tensor site's name is not shown as text (%d times)" % dom.count(name)
PY
exit 0
