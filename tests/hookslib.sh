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

# ranges DUMP: one line per range record and mark of `memtrace dump`, and
# "note categories=N" for each categories note (thread "-"), in
# time order (the dump gives each thread's records together):
# "OP ORIGIN DOMAIN [NAME] [id=ID]", strings resolved ("-": no domain),
# origin 5 as "torch" (MT_ORIGIN_TORCH, whatever name the dump gives it);
# with RANGES_TID=1 each line begins with its thread, "t1", "t2", ... in
# the order the threads first appear in time
ranges() {
	awk '$1 == "string" { id = $2; sub(/^id=/, "", id); t = $0; sub(/^[^"]*"/, "", t); sub(/"$/, "", t); s[id] = t }
	$1 == "range" { delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		o = f["origin"] == "5" ? "torch" : f["origin"]
		line = f["op"] " " o " " (f["domain"] ? s[f["domain"]] : "-")
		if (f["op"] == "push" || f["op"] == "start" || f["op"] == "mark") line = line " " s[f["message"]]
		if (f["op"] == "start" || f["op"] == "end") line = line " id=" f["id"]
		t = f["time"]; sub(/^\+/, "", t)
		print t, f["tid"], line }
	$1 == "fw_info" && / text="categories=/ { t = $2; sub(/^time=\+/, "", t); c = $0
		sub(/^.* text="/, "", c); sub(/\\n.*$/, "", c); print t, "-", "note " c }' "$1" | sort -n -s -k1,1 |
	awk -v bytid="${RANGES_TID:-0}" '{ tid = $2; $1 = ""; $2 = ""; sub(/^  /, "")
		if (bytid) { if (!(tid in th)) th[tid] = "t" (++n); $0 = th[tid] " " $0 }
		print }'
}

# categories DUMP: the text of each categories note, its lines joined by " | "
categories() {
	sed -n 's/^fw_info .* text="\(categories=.*\)\\n"$/\1/p' "$1" | sed 's/\\n/ | /g'
}
