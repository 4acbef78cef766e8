#!/bin/sh
# bench/run.sh - `make bench`: measures memtrace on the simulated driver and
# writes bench/RESULTS.md. Each figure is the median of ROUNDS runs with min
# and max; every traced run is paired with an untraced run in the same round
# and the overhead is taken from that pair, since these machines are noisy.
#   ROUNDS=5 PAIRS=200000 bench/run.sh
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
SIM=$B/simcuda/driver:$B/simcuda/runtime
ROUNDS=${ROUNDS:-5}
PAIRS=${PAIRS:-200000}
OUT=bench/RESULTS.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# stats FILE: "median min max" of the numbers in FILE, one per line
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.0f %.0f %.0f", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

loop() { # threads depth-of-stack memtrace-depth|none [library path]
	lp=${4:-$SIM}
	if [ "$3" = none ]; then
		LD_LIBRARY_PATH=$lp $B/bench/alloc-loop "$1" "$PAIRS" "$2"
	else
		LD_LIBRARY_PATH=$lp LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$TMP/t.bin MEMTRACE_DEPTH=$3 \
			$B/bench/alloc-loop "$1" "$PAIRS" "$2"
		rm -f "$TMP"/t*.bin
	fi
}

# heaptrack on the same loop with malloc/free, per event (the application's
# CPU time: heaptrack_interpret, its other process, is not counted).
heaptrack_ov() { # frames -> "median min max" or "n/a"
	if [ -z "$HEAPTRACK" ]; then echo n/a; return; fi
	: >"$TMP/hov"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		plain=$(LD_LIBRARY_PATH=$SIM $B/bench/alloc-loop 1 "$PAIRS" "$1" malloc)
		traced=$(LD_LIBRARY_PATH=$SIM $HEAPTRACK -o "$TMP/hk" $B/bench/alloc-loop 1 "$PAIRS" "$1" malloc 2>/dev/null |
			grep -E '^[0-9.]+$')
		rm -f "$TMP"/hk*
		[ -n "$traced" ] && awk -v a="$plain" -v b="$traced" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/hov"
	done
	[ -s "$TMP/hov" ] && stats "$TMP/hov" || echo n/a
}

overhead_row() { # threads frames memtrace-depth label [library path]
	: >"$TMP/ov"
	: >"$TMP/base"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		plain=$(loop "$1" "$2" none "${5:-}")
		traced=$(loop "$1" "$2" "$3" "${5:-}")
		echo "$plain" >>"$TMP/base"
		awk -v a="$plain" -v b="$traced" 'BEGIN { printf "%.1f\n", (b - a) / 2 }' >>"$TMP/ov"
	done
	OV=$(stats "$TMP/ov")
	BASE=$(stats "$TMP/base")
}

# heaptrack, from Debian, for the comparison column (bench only).
HEAPTRACK=$(command -v heaptrack || true)
if [ -z "$HEAPTRACK" ] && command -v apt-get >/dev/null 2>&1; then
	echo "memtrace bench: installing heaptrack with apt-get" >&2
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get install -y -qq heaptrack >/dev/null 2>&1 || true
	HEAPTRACK=$(command -v heaptrack || true)
fi

# The driver stand-in without a global lock, for the scaling rows.
STANDIN=$TMP/standin
mkdir -p "$STANDIN"
${CC:-cc} -O2 -shared -fPIC -fvisibility=hidden -Wl,-soname,libcuda.so.1 bench/standin/libcuda.c \
	-o "$STANDIN/libcuda.so.1" || STANDIN=

echo "memtrace bench: $ROUNDS rounds of $PAIRS alloc/free pairs per thread" >&2
{
	echo "# memtrace benchmark results"
	echo
	echo "Measured by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d), $(nproc) cores,"
	echo "$(uname -m), on the simulated driver. Median of $ROUNDS rounds (min .. max)."
	echo
	echo "## Recorder: cost per event"
	echo
	echo "CPU time per cuMemAlloc_v2/cuMemFree_v2 pair (bench/alloc-loop.c), traced minus"
	echo "untraced in the same round, halved (two events per pair), one thread on the"
	echo "simulated driver. heaptrack ($(${HEAPTRACK:-false} --version 2>/dev/null | head -1 || echo not installed))"
	echo "traces the same loop with malloc/free (alloc-loop ... malloc) at the same stack"
	echo "depth, in the same run: its application's CPU time, heaptrack_interpret's not"
	echo "counted. Targets: <= 60 ns without a stack, <= 150 ns at ~5 frames, <= 600 ns"
	echo "at 64 frames."
	echo
	echo "| configuration | memtrace per event | min .. max | untraced pair | heaptrack per event | min .. max |"
	echo "| --- | --- | --- | --- | --- | --- |"
	for c in "0 0 no stack (MEMTRACE_DEPTH=0)" "5 5 5-frame stack, depth 5" "64 64 64-frame stack, depth 64"; do
		set -- $c
		fr=$1 dp=$2; shift 2
		overhead_row 1 "$fr" "$dp" "$*"
		set -- $OV $BASE
		if [ "$fr" = 0 ]; then hk="n/a - -"; else hk=$(heaptrack_ov "$fr"); fi
		[ "$hk" = n/a ] && hk="n/a - -"
		set -- "$@" $hk
		printf '| %s | %s ns | %s .. %s | %s ns | %s%s | %s .. %s |\n' "$(echo "$c" | cut -d' ' -f3-)" "$1" "$2" "$3" "$4" \
			"$7" "$([ "$7" = n/a ] || echo ' ns')" "${8:-}" "${9:-}"
	done
	echo
	echo "Command: \`LD_LIBRARY_PATH=build/simcuda/driver [LD_PRELOAD=build/libmemtrace.so"
	echo "MEMTRACE_DEPTH=D] build/bench/alloc-loop 1 $PAIRS FRAMES\`; heaptrack:"
	echo "\`heaptrack -o FILE build/bench/alloc-loop 1 $PAIRS FRAMES malloc\`."
	echo
	echo "Stacks (preload/stacks.c): memtrace walks the frames itself with the rules of"
	echo "their CFI (libunwind's fast trace, the same stacks as unw_backtrace), and each"
	echo "thread keeps its last 8 walks with the words each read: a repeated path is"
	echo "checked word by word instead of walked and hashed, and a walk that differs"
	echo "resumes where it differs and takes the rest of a recent walk once they meet"
	echo "again. Frees keep their full stack: the analysis never reads a free's stack"
	echo "(peaks, leaks and failures take the allocation's), but the database keeps it"
	echo "(allocs.free_stack). Varied call paths: the next section."
	echo
	echo "Without a stack (perf on the stand-in, one thread, format 1 records): about 40%"
	echo "of the traced CPU time was the kernel filling the trace file's pages (ext4,"
	echo "MADV_POPULATE_WRITE), 30% clock_gettime and 22% memtrace's own code; the compact"
	echo "records of format 2 (about 6 bytes an event instead of 32) write a fifth of the"
	echo "pages, which is what brought the no-stack figure under its target. A TSC clock was"
	echo "not made: in one loop here clock_gettime(CLOCK_MONOTONIC) costs 59-62 ns and"
	echo "rdtscp alone 48-55 ns (rdtsc is slow on this VM), about 10 ns an event, against"
	echo "a calibration that drifts from CLOCK_MONOTONIC as NTP slews it (the analyzer"
	echo "merges files on that clock) and a switch between two clocks while threads run."
	echo
	echo "## Recorder: varied call paths"
	echo
	echo "CPU ns per event on bench/paths.c (PATHS call paths whose return addresses"
	echo "differ, random recursion, a deep common tail, threads) and on the repeated"
	echo "path of alloc-loop, all at MEMTRACE_DEPTH=64 (bench/paths-bench.sh): memtrace;"
	echo "its walk without the memo (MEMTRACE_STACK_CACHE=2); every stack by libunwind's"
	echo "unw_backtrace (MEMTRACE_STACK_CACHE=0: the plain full unwind); heaptrack on the"
	echo "same client doing malloc/free. These count the traced process's CPU only. The"
	echo "\"all processes\" columns count every process of the tool (heaptrack's"
	echo "interpreter and compressor too; memtrace has none) as a marginal cost: the CPU"
	echo "of the whole tree (bench/treecpu, RUSAGE_CHILDREN) at 2,000,000 pairs less at"
	echo "1,000,000, traced less untraced, over the 2,000,000 events it adds (a thread)."
	echo "Targets (issue 24): <= 150 ns at ~5 frames, <= 600 ns at 64, never above the"
	echo "plain full unwind, >= 2x under heaptrack."
	echo
	ROUNDS=$ROUNDS PAIRS=$PAIRS bench/paths-bench.sh
	echo
	echo "Command: \`ROUNDS=$ROUNDS PAIRS=$PAIRS bench/paths-bench.sh [ROW...]\`; the"
	echo "profiles and the choices measured: bench/PROFILES.md."
	echo
	echo "## Recorder: threads"
	echo
	echo "The same per event with 1, 8 and 16 threads on bench/standin/libcuda.c, a"
	echo "driver stand-in without a global lock (the simulator's lock would measure"
	echo "itself), CPU time of all threads. Target: within 1.3x of one thread."
	echo
	echo "| configuration | threads | per event | min .. max | vs 1 thread |"
	echo "| --- | --- | --- | --- | --- |"
	if [ -n "$STANDIN" ]; then
		for c in "0 0 no stack" "5 5 5-frame stack" "64 64 64-frame stack"; do
			set -- $c
			fr=$1 dp=$2; shift 2
			one=
			for th in 1 8 16; do
				overhead_row $th "$fr" "$dp" "$*" "$STANDIN"
				set -- $OV
				[ -n "$one" ] || one=$1
				printf '| %s | %s | %s ns | %s .. %s | %s |\n' "$(echo "$c" | cut -d' ' -f3-)" "$th" "$1" "$2" "$3" \
					"$(awk -v a="$one" -v b="$1" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }')"
			done
		done
	fi
	echo
	echo "## Recorder: trace bytes per event"
	echo
	LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$TMP/size.bin MEMTRACE_DEPTH=64 \
		$B/bench/alloc-loop 1 "$PAIRS" 64 >/dev/null
	$B/memtrace dump "$TMP/size.bin" >"$TMP/dump"
	size=$(wc -c <"$TMP/size.bin")
	events=$(grep -cE '^(alloc|free) ' "$TMP/dump")
	stack_bytes=$(awk '$1 == "stack" { split($3, kv, "="); s += 16 + 8 * kv[2] } END { print s + 0 }' "$TMP/dump")
	awk -v s="$size" -v e="$events" -v k="$stack_bytes" 'BEGIN {
		printf "Trace format 2: events are compact records (varint deltas of time and address,\n"
		printf "fields left out when they repeat). %d events in a %d-byte file from one\n", e, s
		printf "thread with a 64-frame stack. Slab headers, unused slab tails, process and\n"
		printf "module records count as event bytes; the fixed 64 KiB before the first slab\n"
		printf "(a hole: mostly unallocated) does not. Target: <= 16 (format 1: 32).\n\n"
		printf "| trace | bytes per event |\n| --- | --- |\n"
		printf "| alloc-loop, new stacks included | %.2f |\n", (s - 65536) / e
		printf "| alloc-loop, new stacks excluded | %.2f |\n", (s - 65536 - k) / e }'
	LD_LIBRARY_PATH=$SIM $B/memtrace run -o "$TMP/thr.bin" -- $B/tests/clients/rt-threads 16 20000 >/dev/null 2>&1
	size=$(($(wc -c <"$TMP/thr.bin") - 65536))
	events=$($B/memtrace dump "$TMP/thr.bin" | grep -cE '^(alloc|free) ')
	awk -v s="$size" -v e="$events" 'BEGIN { printf "| rt-threads, 16 threads x 20,000 pairs | %.2f |\n", s / e }'
	rm -f "$TMP"/thr*.bin
	LD_LIBRARY_PATH=$SIM $B/memtrace run -o "$TMP/short.bin" -- $B/tests/clients/rt-short-threads 2000 >/dev/null 2>&1
	size=$(wc -c <"$TMP/short.bin")
	echo
	echo "2,000 short-lived threads, one cudaMalloc and one cudaFree each, one at a time"
	echo "(tests/clients/rt-short-threads): a thread that ends gives its slab's tail to the"
	echo "next. Target: <= 2 MB (format 1: 131 MB, a 64 KiB slab per thread)."
	echo
	echo "| trace | bytes |"
	echo "| --- | --- |"
	echo "| 2,000 short threads, 4,000 events | $size |"
	rm -f "$TMP"/short*.bin
	echo
	echo "## Recorder: Python frames"
	echo
	echo "ns per event at a 30-deep Python recursion, one C call making the pairs"
	echo "(bench/py-bench.py), with Python frames (MEMTRACE_PYTHON=1) against native-only"
	echo "stacks (=0), paired per round. Target: under 500 ns added."
	echo
	echo "| python | added per event | min .. max |"
	echo "| --- | --- | --- |"
	if command -v python3 >/dev/null; then
		: >"$TMP/py"
		r=0
		while [ $r -lt "$ROUNDS" ]; do
			r=$((r + 1))
			for on in 0 1; do
				LD_LIBRARY_PATH=$SIM MEMTRACE_PYTHON=$on $B/memtrace run -o "$TMP/py.bin" -- \
					python3 bench/py-bench.py $B/tests/clients/lib-pyhelper 100000 30 2>/dev/null |
					sed -n 's/.*: \([0-9.]*\) ns per event.*/\1/p' >"$TMP/py.$on"
				rm -f "$TMP"/py*.bin
			done
			awk -v a="$(cat "$TMP/py.0")" -v b="$(cat "$TMP/py.1")" 'BEGIN { printf "%.0f\n", b - a }' >>"$TMP/py"
		done
		set -- $(stats "$TMP/py")
		printf '| %s | %s ns | %s .. %s |\n' "$(python3 -c 'import sys; print(sys.version.split()[0])')" "$1" "$2" "$3"
	fi
	echo
	echo "## Samples under memtrace"
	echo
	echo "Wall time of each sample on the simulated CUDA, untraced and under \`memtrace run\`"
	echo "(median of $ROUNDS pairs). The samples make few calls: this is mostly start-up"
	echo "(creating the trace, the module map, the first backtraces)."
	echo
	echo "| sample | untraced | traced | slowdown |"
	echo "| --- | --- | --- | --- |"
	for smp in leak fragmentation activations stream-ordered pinned-expandable multiprocess shm-leak; do
		[ -x $B/samples/$smp ] || continue
		: >"$TMP/a"; : >"$TMP/b"; : >"$TMP/ratio"
		r=0
		while [ $r -lt "$ROUNDS" ]; do
			r=$((r + 1))
			t0=$(date +%s%N)
			SIMCUDA_MEM=400M SIMCUDA_DEVICES=2 LD_LIBRARY_PATH=$SIM $B/samples/$smp >/dev/null 2>&1
			t1=$(date +%s%N)
			SIMCUDA_MEM=400M SIMCUDA_DEVICES=2 LD_LIBRARY_PATH=$SIM $B/memtrace run -o "$TMP/s.bin" -- \
				$B/samples/$smp >/dev/null 2>&1
			t2=$(date +%s%N)
			rm -f "$TMP"/s*.bin
			echo $(( (t1 - t0) / 1000 )) >>"$TMP/a"
			echo $(( (t2 - t1) / 1000 )) >>"$TMP/b"
			awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) 'BEGIN { printf "%.2f\n", b / a }' >>"$TMP/ratio"
		done
		printf '| %s | %s us | %s us | %sx |\n' "$smp" "$(stats "$TMP/a" | cut -d' ' -f1)" \
			"$(stats "$TMP/b" | cut -d' ' -f1)" \
			"$(sort -n "$TMP/ratio" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
	done
	echo
	if [ -x bench/report-bench.sh ] && [ -x /usr/bin/time ]; then
		echo "## Analyzer"
		echo
		echo "\`memtrace report\` on traces of rt-threads (4 threads, MEMTRACE_DEPTH=4): the"
		echo "first report (load into SQLite + analysis), with the database reused, and"
		echo "without a database (bench/report-bench.sh): the median of 3 runs, each after"
		echo "a sync, with the range and the CPU time (user + system); the peak RSS is the"
		echo "largest of the 3. Targets (issue 15): >= 3 M events/s end to end with the"
		echo "database at 10 M events, peak RSS <= 64 MB; >= 10 M events/s with --no-db."
		echo
		echo '```'
		bench/report-bench.sh ${REPORT_EVENTS:-1000000 10000000}
		echo '```'
		echo
		echo "Where the time goes, each choice measured, and 1,024 ranks (too long for"
		echo "\`make bench\`: \`bench/report-bench.sh ranks 1024\`): bench/PROFILES.md."
	fi
	if [ -x bench/view-bench.sh ] && command -v chromium >/dev/null 2>&1; then
		echo
		echo "## The page of memtrace view"
		echo
		echo "\`memtrace view\` on the same kind of traces (bench/view-bench.sh): the time to"
		echo "write the page, its size, and headless Chromium's first paint with everything"
		echo "drawn (measured by the page, from navigation), and the whole --dump-dom run."
		echo "Targets: at most 30 MB and a first paint under 3 s at 10 M events; view and"
		echo "plot (gnuplot included) under 5 s at 10 M events. The page"
		echo "stays near 2 MB however long the run: the model keeps a few timeline rows per"
		echo "1/4000 of the run, and the address map the largest 20,000 allocations."
		echo
		echo '```'
		bench/view-bench.sh ${REPORT_EVENTS:-1000000 10000000}
		echo '```'
	fi
	echo
	echo "## PyTorch: draining the allocator's history"
	echo
	echo "bench/torch-drain.py on the torch test double (tests/torchdouble) over the simulated"
	echo "CUDA, under memtrace run: 20,000 allocations and their frees (60,001 history"
	echo "entries), then one drain of a snapshot taken beforehand; memtrace's part per event"
	echo "(finding the new entries, clock offset, stack interning, packing, memtrace_fw_events)."
	echo "The double's _snapshot() is Python; PyTorch's is C++ and is not measured here."
	echo "Target: <= 2 us per tensor event."
	echo
	echo '```'
	r=0
	while [ $r -lt 3 ]; do
		LD_LIBRARY_PATH=$SIM PYTHONPATH=tests/torchdouble $B/memtrace run --no-summary -o "$TMP/d.bin" -- \
			python3 bench/torch-drain.py 20000 2>&1 | grep entries
		rm -f "$TMP"/d*.bin
		r=$((r + 1))
	done
	echo '```'
	echo
	echo "What the drains cost a job (bench/torch-budget.sh): bench/torch-rate.py makes"
	echo "30,000 history entries a second for 30 s on the double, whose _snapshot() waits"
	echo "7 us an entry holding the GIL (PR #172672's figure for real PyTorch); the periodic"
	echo "drains' share of the run is held to MEMTRACE_TORCH_BUDGET (2%), the exit drain"
	echo "(the whole ring, once) apart; what the ring dropped in between is counted and"
	echo "said in the report, whose peaks come from PyTorch's own counters then."
	echo
	ROUNDS=1 bench/torch-budget.sh 30000 30
	echo
	echo "The load and fault versions (16 threads x 1 M pairs against the simulator's log,"
	echo "100 SIGKILL trials, 200 forks) are bench/load.sh, run apart (about 10 minutes)."
	echo "What memtrace top costs following 16 processes: bench/top-bench.sh, in"
	echo "bench/PROFILES.md."
} >"$OUT.tmp" && mv "$OUT.tmp" "$OUT"
cat "$OUT"
