#!/bin/sh
# Python frames on every CPython 3.9 .. 3.13 found (python3 and ~/.pyenv):
# a plain call, a generator, an async function, each with the right
# function and line. Skipped when none is installed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pylib.sh"

tried=0
for py in $(pythons); do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
	case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) continue ;; esac
	tried=$((tried + 1))
	TRACE=$T/trace-$v.bin traced "$py" "$PYCLIENT" all "$PYHELPER" >"$T/out" 2>"$T/err" ||
		fail "$v: client failed: $(cat "$T/err")"
	grep -q warning "$T/err" && fail "$v: $(cat "$T/err")"
	"$MEMTRACE" dump --resolve-python "$T/trace-$v.bin" >"$T/dump" || fail "$v: dump failed"
	expect_eq "$(grep -c "^pycode .* version=$v " "$T/dump")" "$(grep -c '^pycode' "$T/dump")" "$v: pycode versions"

	py_stack "$T/dump" alloc 1048576 | py_only | head -n 3 | tr '\n' ' ' >"$T/got"
	expect_eq "$(cat "$T/got")" "py-alloc.py:$(line alloc_basic):alloc_basic py-alloc.py:$(line caller_basic):caller_basic py-alloc.py:$(line main_basic):main " "$v: plain call"
	for b in 3145728 3145729; do
		py_stack "$T/dump" alloc $b | py_only | head -n 2 | tr '\n' ' ' >"$T/got"
		expect_eq "$(cat "$T/got")" "py-alloc.py:$(line alloc_gen):gen_allocs py-alloc.py:$(line consume_gen):consume_gen " "$v: generator ($b)"
	done
	py_stack "$T/dump" alloc 5242880 | py_only >"$T/py"
	expect_eq "$(head -n 2 "$T/py" | tr '\n' ' ')" "py-alloc.py:$(line alloc_async):alloc_async py-alloc.py:$(line main_async):main_async " "$v: async function"
	expect_eq "$(tail -n 1 "$T/py" | sed 's/:[0-9]*:/:/')" "py-alloc.py:<module>" "$v: outermost frame of the async allocation"
done
[ $tried -gt 0 ] || skip "no CPython 3.9 .. 3.13 found"
echo "checked $tried interpreters"
