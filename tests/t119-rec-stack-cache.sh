#!/bin/sh
# The recorder's unwind cache (preload/stacks.c) gives exactly the stacks of
# a full unwind: two call paths that reach one leaf through the same caller,
# at the same stack pointer, are two stacks, alternating as the program
# alternates; and a child of fork that repeats its parent's stack gets that
# stack written to its own trace, not the parent's id.
. "$(dirname "$0")/lib.sh"

traced "$CLIENTS/drv-stack-paths" >"$T/out" 2>"$T/err" || fail "drv-stack-paths failed: $(cat "$T/err")"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
expect_eq "$(grep -c '^[ab] ' "$T/out")" 8 "allocations in the parent"

# alloc_stacks DUMP OUT PREFIX: per line of OUT, "path stack-id has-ret":
# has-ret is 1 when the stack of the allocation at ADDR holds RET.
alloc_stacks() {
	awk -v pre="$3" '
	FNR == NR {
		if ($1 == "stack") {
			split($2, kv, "="); s[kv[2]] = " " substr($0, index($0, $4)) " "
		} else if ($1 == "alloc") {
			delete f
			for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
			id[f["addr"]] = f["stack"]
		}
		next
	}
	pre == "" && ($1 == "a" || $1 == "b") { print $1, id[$2], (index(s[id[$2]], " " $3 " ") > 0) }
	pre != "" && $1 == pre { print $2, id[$3], (index(s[id[$3]], " " $4 " ") > 0) }' "$1" "$2"
}
alloc_stacks "$T/dump" "$T/out" "" >"$T/got"
expect_eq "$(awk '$3 != 1' "$T/got" | wc -l)" 0 "allocations whose stack lacks their path's frame: $(cat "$T/got")"
expect_eq "$(awk '{ print $1, $2 }' "$T/got" | sort -u | wc -l)" 2 "distinct (path, stack) pairs"
expect_eq "$(awk '{ print $2 }' "$T/got" | sort -u | wc -l)" 2 "distinct stacks of the two paths"

# The child: its allocation's stack is written in its own trace.
child=$(ls "$T" | grep -E '^trace\.[0-9]+\.bin$')
[ -n "$child" ] || fail "no child trace: $(ls "$T")"
"$MEMTRACE" dump "$T/$child" >"$T/cdump" || fail "dump of the child failed"
alloc_stacks "$T/cdump" "$T/out" child >"$T/cgot"
expect_eq "$(cat "$T/cgot")" "a 1 1" "the child's allocation and its stack"
missing=$(awk '$1 == "stack" { split($2, kv, "="); have[kv[2]] = 1 }
	$1 == "alloc" || $1 == "free" { for (i = 2; i <= NF; i++) if ($i ~ /^stack=/) { split($i, kv, "="); if (kv[2] != 0 && !have[kv[2]]) n++ } }
	END { print n + 0 }' "$T/cdump")
expect_eq "$missing" 0 "events of the child naming a stack its trace does not hold"

# The same stacks, frame for frame, with the cache off (module offsets: the
# two runs load at different addresses).
norm() { # DUMP: each event's stack as module+offset frames, in event order
	awk "$AWK_HEX"'
	$1 == "module" { delete f; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		n = split(f["path"], p, "/"); m++; lo[m] = hex(f["start"]); hi[m] = hex(f["end"]); name[m] = p[n] }
	$1 == "stack" { split($2, kv, "="); t = ""
		for (i = 4; i <= NF; i++) { x = hex($i); w = "?"
			for (j = 1; j <= m; j++) if (x >= lo[j] && x < hi[j]) { w = name[j] "+" (x - lo[j]); break }
			t = t " " w }
		s[kv[2]] = t }
	$1 == "alloc" || $1 == "free" { for (i = 2; i <= NF; i++) if ($i ~ /^stack=/) { split($i, kv, "="); print $1 s[kv[2]] } }' "$1"
}
norm "$T/dump" >"$T/on"
grep -q 'drv-stack-paths"+' "$T/on" || fail "no frame in the client: $(head -3 "$T/on")"
TRACE=$T/off.bin MEMTRACE_STACK_CACHE=0 traced "$CLIENTS/drv-stack-paths" >/dev/null 2>&1 || fail "run without cache failed"
"$MEMTRACE" dump "$T/off.bin" >"$T/dump.off" || fail "dump failed"
norm "$T/dump.off" >"$T/off"
diff -u "$T/off" "$T/on" || fail "stacks differ with the cache on"
