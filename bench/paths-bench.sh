#!/bin/sh
# bench/paths-bench.sh - the recorder's cost per event on varied call paths
# (bench/paths.c) and on the repeated one (bench/alloc-loop.c), at
# MEMTRACE_DEPTH=64: memtrace as it is, memtrace's walk without its memo
# (MEMTRACE_STACK_CACHE=2), memtrace with MEMTRACE_STACK_CACHE=0 (every stack
# by unw_backtrace: the plain full unwind), and heaptrack on the same client
# doing malloc/free. CPU ns per event: (traced - untraced) / 2
# per pair, untraced and each traced run interleaved in every round, median
# of ROUNDS rounds (min .. max). Those count the traced process only; the
# "all processes" columns count the CPU of every process of the tool
# (bench/treecpu: heaptrack's interpreter and compressor too, memtrace has
# none), as the marginal cost of an event: the tree's CPU at 2 x TREE_PAIRS
# pairs less at TREE_PAIRS, traced less untraced, over the events that
# adds, so start-up and the end of the run cancel (heaptrack's are about a
# second of CPU, which moves by 0.1-0.2 s: hence a million pairs). Prints a markdown table; make
# bench calls it from bench/run.sh.
#   ROUNDS=5 PAIRS=100000 TREE_PAIRS=1000000 bench/paths-bench.sh [ROW-NAME...]
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
SIM=$B/simcuda/driver
ROUNDS=${ROUNDS:-5}
PAIRS=${PAIRS:-100000}
TREE_PAIRS=${TREE_PAIRS:-1000000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
HEAPTRACK=$(command -v heaptrack || true)
# The threads row on the driver stand-in without a global lock (as make
# bench's thread rows): the simulator's lock would measure itself.
STANDIN=$TMP/standin
mkdir -p "$STANDIN"
${CC:-cc} -O2 -shared -fPIC -fvisibility=hidden -Wl,-soname,libcuda.so.1 bench/standin/libcuda.c \
	-o "$STANDIN/libcuda.so.1" 2>/dev/null || STANDIN=$SIM
FILTER=" $* "

stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.0f %.0f %.0f", v[int((NR + 1) / 2)], v[1], v[NR]; else printf "n/a - -" }'; }

# rows: name|threads|client args (alloc-loop or paths), without "malloc"
ROWS='repeated-5|1|alloc-loop 5
repeated-64|1|alloc-loop 64
paths-4|1|paths 4 seq 0
paths-16-rand|1|paths 16 rand 0
paths-64|1|paths 64 rand 0
paths-1024|1|paths 1024 rand 0
recursion-1-64|1|paths rec rand 0
paths-16-pad-50|1|paths 16 rand 50
threads-8x16|8|paths 16 rand 0'

label() {
	case $1 in
	repeated-5) echo "one path repeated, 5 frames" ;;
	repeated-64) echo "one path repeated, 64 frames" ;;
	paths-4) echo "4 paths (about 7 frames)" ;;
	paths-16-rand) echo "16 paths, random order" ;;
	paths-64) echo "64 paths, random order" ;;
	paths-1024) echo "1,024 paths, random order" ;;
	recursion-1-64) echo "random recursion depth 1-64" ;;
	paths-16-pad-50) echo "16 paths + 50 frames of padding (64-frame stacks)" ;;
	threads-8x16) echo "8 threads x 16 paths (driver stand-in)" ;;
	esac
}

run() { # threads client args... [malloc]: prints ns per pair, the tree's CPU ns in $TMP/cpu
	th=$1 prog=$2; shift 2
	lp=$SIM
	[ "$th" -gt 1 ] && lp=$STANDIN
	LD_LIBRARY_PATH=$lp $B/bench/treecpu "$TMP/cpu" ${PRE:-} $B/bench/$prog "$th" "${NP:-$PAIRS}" "$@"
}

MT="env LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$TMP/t.bin MEMTRACE_DEPTH=64"

tree() { # threads client args...: the tree's CPU ns at TREE_PAIRS pairs, then at twice as many
	for NP in $TREE_PAIRS $((TREE_PAIRS * 2)); do
		run "$@" >/dev/null 2>&1
		cat "$TMP/cpu"
		rm -f "$TMP"/t*.bin "$TMP"/hk.*
	done
	unset NP
}

# marginal ns an event: traced (1 2: tree at N, 2N) less untraced (3 4), over 2 N threads events
marginal() { awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" -v e="$5" 'BEGIN { printf "%.1f\n", ((b - a) - (d - c)) / e }'; }

echo "| client | memtrace, depth 64 | min .. max | walk, no memo | min .. max | cache off (unw_backtrace) | min .. max | heaptrack | min .. max | untraced pair | memtrace, all processes | min .. max | heaptrack, all processes | min .. max |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
echo "$ROWS" | while IFS='|' read -r name th args; do
	if [ "$FILTER" != "  " ]; then
		case "$FILTER" in *" $name "*) ;; *) continue ;; esac
	fi
	: >"$TMP/on"; : >"$TMP/walk"; : >"$TMP/off"; : >"$TMP/hk"; : >"$TMP/base"; : >"$TMP/mtall"; : >"$TMP/hkall"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		set -f
		plain=$(run "$th" $args)
		on=$(PRE="$MT" run "$th" $args)
		rm -f "$TMP"/t*.bin
		walk=$(PRE="$MT MEMTRACE_STACK_CACHE=2" run "$th" $args)
		rm -f "$TMP"/t*.bin
		off=$(PRE="$MT MEMTRACE_STACK_CACHE=0" run "$th" $args)
		rm -f "$TMP"/t*.bin
		echo "$plain" >>"$TMP/base"
		awk -v a="$plain" -v b="$on" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/on"
		awk -v a="$plain" -v b="$walk" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/walk"
		awk -v a="$plain" -v b="$off" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/off"
		events=$((TREE_PAIRS * 2 * th))
		# shellcheck disable=SC2046
		marginal $(PRE="$MT" tree "$th" $args) $(tree "$th" $args) $events >>"$TMP/mtall"
		if [ -n "$HEAPTRACK" ]; then
			mplain=$(run "$th" $args malloc)
			# paths takes "malloc" as its 6th argument, alloc-loop as its 4th
			hk=$(PRE="$HEAPTRACK -o $TMP/hk" run "$th" $args malloc 2>/dev/null | grep -E '^[0-9.]+$')
			rm -f "$TMP"/hk.*
			[ -n "$hk" ] && awk -v a="$mplain" -v b="$hk" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/hk"
			# shellcheck disable=SC2046
			marginal $(PRE="$HEAPTRACK -o $TMP/hk" tree "$th" $args malloc) $(tree "$th" $args malloc) \
				$events >>"$TMP/hkall"
		fi
		set +f
	done
	# shellcheck disable=SC2046
	printf "| %s | %s ns | %s .. %s | %s ns | %s .. %s | %s ns | %s .. %s | %s ns | %s .. %s | %s ns | %s ns | %s .. %s | %s ns | %s .. %s |\n" \
		"$(label "$name")" $(stats "$TMP/on") $(stats "$TMP/walk") $(stats "$TMP/off") $(stats "$TMP/hk") \
		$(stats "$TMP/base" | cut -d" " -f1) $(stats "$TMP/mtall") $(stats "$TMP/hkall")
done
