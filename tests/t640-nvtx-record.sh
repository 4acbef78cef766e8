#!/bin/sh
# t640: NVTX v3 ranges recorded with no change to the program. rt-nvtx is
# built with the toolkit's header-only nvtx3/ and knows nothing of
# memtrace; `memtrace run` sets NVTX_INJECTION64_PATH. Checks the records
# (push/pop in order with their names and domains, registered strings,
# marks, thread names, wide strings in UTF-8, start/end across threads,
# a pop with nothing open), a user's own injection library chained (it
# sees every call with its own handles, the program gets its answers), one
# that fails to load or to initialize (said once, memtrace goes on), and
# what NVTX does without memtrace (nothing: the program runs the same).
. "$(dirname "$0")/lib.sh"
[ -x "$CLIENTS/rt-nvtx" ] || skip "no rt-nvtx (the CUDA toolkit's nvtx3 headers are missing)"

# ranges as "op domain-name message-name", names resolved from strings
ranges() {
	"$MEMTRACE" dump "$1" | awk '
	$1 == "string" { id = substr($2, 4); t = $0; sub(/^[^"]*"/, "", t); sub(/"$/, "", t); s[id] = t; next }
	$1 == "range" {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		d = f["domain"] == 0 ? "-" : s[f["domain"]]
		m = f["message"] == 0 ? "-" : s[f["message"]]
		line = f["op"] " " d " " m
		if (f["op"] == "name_thread") line = line " " (f["id"] == f["tid"] ? "self" : f["id"])
		print line
	}'
}

traced "$CLIENTS/rt-nvtx" train 2>"$T/err" || fail "rt-nvtx train failed: $(cat "$T/err")"
ranges "$T/trace.bin" >"$T/got"
{
	echo "name_thread - trainer self"
	echo "mark - epoch 1"
	for n in 1 2 3; do
		echo "push - step $n"; echo "push io load"; echo "pop io -"
		echo "push - forward"; echo "pop - -"; echo "push - backward"; echo "pop - -"; echo "pop - -"
	done
} >"$T/want"
diff "$T/want" "$T/got" >"$T/diff" || fail "train ranges differ: $(cat "$T/diff")"
"$MEMTRACE" dump "$T/trace.bin" | head -n 1 | grep -q "format 2\.2," || fail "not format 2.2"
# each string once
dups=$("$MEMTRACE" dump "$T/trace.bin" | awk '$1 == "string" { sub(/^string id=[0-9]* /, ""); n[$0]++ } END { for (k in n) if (n[k] > 1) print k }')
expect_eq "$dups" "" "strings written more than once"

# wide strings
TRACE=$T/wide.bin traced "$CLIENTS/rt-nvtx" wide 2>/dev/null || fail "rt-nvtx wide failed"
expect_eq "$(ranges "$T/wide.bin" | tr '\n' '|')" "push - naïve|mark - märk|push déjà αβ|pop déjà -|pop - -|" "wide ranges"

# misuse: recorded as it happened
TRACE=$T/misuse.bin traced "$CLIENTS/rt-nvtx" misuse 2>"$T/err" || fail "rt-nvtx misuse failed"
grep -q "did not return" "$T/err" && fail "a pop with nothing open: $(cat "$T/err")"
expect_eq "$(ranges "$T/misuse.bin" | sort | tr '\n' '|')" "end - -|pop - -|push - left open|start - handoff|" "misuse ranges"
"$MEMTRACE" dump "$T/misuse.bin" | awk '$1 == "range" && ($4 == "op=start" || $4 == "op=end") { tid[$4] = $3; id[$4] = $NF }
	END { if (id["op=start"] != id["op=end"] || tid["op=start"] == tid["op=end"]) exit 1 }' ||
	fail "start and end: not the same id on two threads"

# a user's own injection library, chained
: >"$T/tool.log"
NVTX_INJECTION64_PATH=$CLIENTS/lib-nvtxtool NVTXTOOL_LOG=$T/tool.log TRACE=$T/chain.bin \
	traced "$CLIENTS/rt-nvtx" train 2>"$T/err" || fail "chained run failed: $(cat "$T/err")"
grep -v "^memtrace: wrote" "$T/err" | grep . && fail "chained run said: $(cat "$T/err")"
ranges "$T/chain.bin" >"$T/got"
diff "$T/want" "$T/got" >"$T/diff" || fail "chained: memtrace's ranges differ: $(cat "$T/diff")"
expect_eq "$(head -n 4 "$T/tool.log" | tr '\n' '|')" "init 0|domain io 0|register load 0|mark epoch 10|" "the tool's first calls"
expect_eq "$(grep -c '^push step' "$T/tool.log")" 3 "the tool's step pushes"
expect_eq "$(grep -c '^dpush io 3$' "$T/tool.log")" 3 "the tool's domain pushes (its own handle, a registered message)"
grep -q "not mine" "$T/tool.log" && fail "the tool got memtrace's handle: $(grep 'not mine' "$T/tool.log")"

# a library that does not load, or whose init fails: said once, memtrace goes on
NVTX_INJECTION64_PATH=$T/none.so TRACE=$T/noload.bin traced "$CLIENTS/rt-nvtx" train 2>"$T/err" ||
	fail "run with a missing injection library failed"
expect_eq "$(grep -c "cannot load the NVTX injection library '$T/none.so'" "$T/err")" 1 "said once: missing library"
expect_eq "$(ranges "$T/noload.bin" | wc -l)" 26 "ranges with a missing chained library"
NVTXTOOL_FAIL=1 NVTX_INJECTION64_PATH=$CLIENTS/lib-nvtxtool TRACE=$T/noinit.bin \
	traced "$CLIENTS/rt-nvtx" train 2>"$T/err" || fail "run with a failing injection library failed"
expect_eq "$(grep -c "failed to initialize" "$T/err")" 1 "said once: init failed"
expect_eq "$(ranges "$T/noinit.bin" | wc -l)" 26 "ranges with a failing chained library"

# without memtrace: NVTX finds no tool, the program runs the same
sim "$CLIENTS/rt-nvtx" train || fail "rt-nvtx without memtrace failed"
sim "$CLIENTS/rt-nvtx" misuse 2>"$T/err" || fail "rt-nvtx misuse without memtrace failed"
exit 0
