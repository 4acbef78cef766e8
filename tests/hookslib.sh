# tests/hookslib.sh - sourced by the PyTorch hooks cases (tests/t73[2-9]-*.sh)
# after lib.sh: the double's training program and a readable form of the
# range records and category notes the hooks write (python/memtrace_hooks.py).
TD=$ROOT/tests/torchdouble
TRAIN=$TD/py-train.py

# tdenv CMD...: CMD with the double first on the path, on the simulated CUDA
tdenv() { PYTHONPATH=$TD PYTHONDONTWRITEBYTECODE=1 sim "$@"; }
# pyd ARGS...: python3 ARGS without memtrace; mtd ARGS...: under memtrace run
pyd() { tdenv python3 "$@"; }
mtd() { tdenv "$MEMTRACE" run --no-summary "$@"; }

# ranges DUMP: one line per range record of `memtrace dump`:
# "OP ORIGIN DOMAIN [NAME] [id=ID]", strings resolved ("-": no domain)
ranges() {
	awk '$1 == "string" { id = $2; sub(/^id=/, "", id); t = $0; sub(/^[^"]*"/, "", t); sub(/"$/, "", t); s[id] = t }
	$1 == "range" { delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		line = f["op"] " " f["origin"] " " (f["domain"] ? s[f["domain"]] : "-")
		if (f["op"] == "push" || f["op"] == "start") line = line " " s[f["message"]]
		if (f["op"] == "start" || f["op"] == "end") line = line " id=" f["id"]
		print line }' "$1"
}

# categories DUMP: the text of each categories note, its lines joined by " | "
categories() {
	sed -n 's/^fw_info .* text="\(categories=.*\)\\n"$/\1/p' "$1" | sed 's/\\n/ | /g'
}
