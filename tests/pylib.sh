# tests/pylib.sh - sourced by the Python-frame cases (tests/t50x-py-*.sh)
# after lib.sh: the ctypes client, its marked lines, and a way to read the
# Python frames of one event's stack.
PYCLIENT=$ROOT/tests/clients/py-alloc.py
PYHELPER=$CLIENTS/lib-pyhelper

# The CPython interpreters to try: python3 on PATH, and every 3.9 .. 3.13
# under ~/.pyenv (PYTHONS=... overrides).
pythons() {
	if [ -n "${PYTHONS:-}" ]; then echo "$PYTHONS"; return; fi
	command -v python3
	for v in 3.9 3.10 3.11 3.12 3.13; do
		ls -d "$HOME"/.pyenv/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -n 1
	done
}

# line NAME: the line of the client marked "# L:NAME"
line() { grep -n "# L:$1\$" "$PYCLIENT" | cut -d: -f1; }

# py_stack DUMP KIND BYTES: the frames of the first KIND (alloc|free) event
# of BYTES bytes (any size for a free: the first one after that alloc), one
# per line: "py FILE:LINE:FUNC" (file without directory) or "native".
# DUMP is the output of `memtrace dump --resolve-python`.
py_stack() {
	awk -v kind="$2" -v bytes="$3" '
	$1 == "stack" { sub(/^id=/, "", $2); s[$2] = $0 }
	$1 == "alloc" && $0 ~ (" bytes=" bytes " ") { seen = 1; if (kind == "alloc") { id = $NF; exit } }
	$1 == "free" && seen && kind == "free" { id = $NF; exit }
	END {
		sub(/^stack=/, "", id)
		n = split(s[id], f, " ")
		for (i = 4; i <= n; i++) {
			if (f[i] ~ /^py:/) { x = substr(f[i], 4); sub(/^.*\//, "", x); print "py " x }
			else print "native"
		}
	}' "$1"
}

# py_only: keeps the Python frames of py_stack, without the "py " prefix
py_only() { sed -n 's/^py //p'; }
