#!/bin/sh
# demo.sh - what `make demo` runs once memtrace and the samples are built:
# traces every sample (samples/*.c) into build/demo/, prints the report of
# the fragmentation sample (an out-of-memory error with enough memory free
# in total), draws the timelines into build/demo/plots/ and writes the
# interactive pages of `memtrace view`, one per run in build/demo/views/,
# and build/demo/view.html, an index that links them (each run on its own
# time axis: two unrelated runs are never drawn as one).
#
# With an NVIDIA GPU (nvidia-smi lists one, or the real libcuda.so.1 and
# /dev/nvidia0 are there) and the CUDA 13 runtime (libcudart.so.13, looked
# for in LD_LIBRARY_PATH, then CUDA_HOME/lib64), the samples run on the GPU;
# otherwise on the simulated GPU of tests/simcuda, which is bookkeeping
# only and never touches a GPU. MEMTRACE_DEMO_SIM=1 forces the simulator.
#
# MEMTRACE_DEMO_DIR=DIR writes there instead of build/demo (the tests do).
# Exits 1, showing the sample's output, when a sample fails.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
B=$ROOT/build
MT=$B/memtrace
OUT=${MEMTRACE_DEMO_DIR:-$B/demo}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
SIMLIB=$B/simcuda/driver:$B/simcuda/runtime

for f in "$MT" "$B/libmemtrace.so" "$B/samples/leak"; do
	[ -e "$f" ] || { echo "demo: $f is missing; run 'make demo'" >&2; exit 1; }
done

has_gpu() {
	[ "${MEMTRACE_DEMO_SIM:-0}" = 1 ] && return 1
	if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
		return 0
	fi
	# No nvidia-smi: a real driver library and a device node will do.
	lib=$(/sbin/ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" { print $NF; exit }')
	[ -n "$lib" ] && [ -e /dev/nvidia0 ] && case "$lib" in "$B"/*) false ;; *) true ;; esac
}

gpus=0
mode=sim
if has_gpu; then
	gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
	[ "$gpus" -ge 1 ] || gpus=1
	RTLIB=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
	if LD_LIBRARY_PATH=$RTLIB ldd "$B/samples/leak" 2>/dev/null | grep -q 'libcudart.so.13 => not found'; then
		echo "memtrace demo: an NVIDIA GPU is here, but not the CUDA 13 runtime (libcudart.so.13)"
		echo "  the samples need; set CUDA_HOME or LD_LIBRARY_PATH to use it. Using the simulated GPU."
	else
		mode=gpu
	fi
fi

if [ $mode = gpu ]; then
	echo "memtrace demo: running the samples on the real GPU ($gpus found)"
	export LD_LIBRARY_PATH="$RTLIB"
else
	echo "memtrace demo: no GPU used; the samples run on the simulated GPU (tests/simcuda:"
	echo "  bookkeeping only, it never touches a GPU; figures in samples/README.md)"
	export LD_LIBRARY_PATH="$SIMLIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	# The context's 300 MiB and a 100 MiB cache: the fragmentation sample's OOM.
	FRAG_ENV="SIMCUDA_MEM=400M"
	export SIMCUDA_DEVICES=2
fi
unset MEMTRACE_OUTPUT MEMTRACE_ROOT_PID MEMTRACE_FOLLOW MEMTRACE_RUN_ID SIMCUDA_LOG

rm -rf "$OUT"
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
D=${OUT#"$ROOT"/}   # as shown
echo

# trace NAME WHAT ENV CMD...: runs CMD under memtrace into $OUT/NAME.bin
# (workers into $OUT/NAME.PID.bin), its output into $OUT/NAME.log.
trace() {
	name=$1 what=$2 envs=$3; shift 3
	env $envs "$MT" run -o "$OUT/$name.bin" -- "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	if [ $rc != 0 ]; then
		echo "demo: '$*' failed (exit $rc):" >&2
		sed 's/^/  /' "$OUT/$name.log" >&2
		exit 1
	fi
	if [ -e "$OUT/$name.bin" ]; then
		files=$name.bin glob=$name.bin
	else
		files="$name.PID.bin x $(ls "$OUT" | grep -c "^$name\.[0-9]*\.bin$")"
		glob="$name.*.bin"
	fi
	printf '  %-28s %s\n' "$files" "$what"
	echo "$name|$what|$glob" >>"$OUT/runs.txt"
}

S=$B/samples
world=2
[ $mode = gpu ] && [ "$gpus" -lt 2 ] && world=1
echo "traces in $D/:"
trace leak "a leak in a training loop" "" "$S/leak"
# the cache's 4 MiB holes are inside its segments, which the CUDA API does
# not see (samples/README.md): the teaser says what the views show
trace fragmentation "cudaMalloc of 30 MiB fails twice; out-of-memory retries" "${FRAG_ENV:-}" "$S/fragmentation"
trace activations "activations kept for backward: 176 MiB" "" "$S/activations"
trace activations-checkpoint "the same, recomputed: 128 MiB" "" "$S/activations" --checkpoint
trace stream-ordered "cudaMallocAsync: pool reserved vs used" "" "$S/stream-ordered"
trace pinned-expandable "pinned host + a growing VMM segment" "" "$S/pinned-expandable"
trace multiprocess "a launcher and $world workers, one per GPU" "" "$S/multiprocess" $world

has_cmd() { "$MT" help "$1" >/dev/null 2>&1; }

# index: build/demo/view.html, one link per run's page with what the run
# shows (the words printed above) and the command of its report
index() {
	cat <<'HTML'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>memtrace demo: the runs</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; color: #1a1a1a; margin: 1em 1.5em 3em; max-width: 60em; }
h1 { font-size: 1.4em; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: .3em .8em; text-align: left; vertical-align: top; }
a { color: #0072B2; }
code { font-size: .92em; }
.hint { color: #555; }
</style>
</head>
<body>
<h1>memtrace demo: one page per run</h1>
<p class="hint">Each sample of <code>samples/</code> ran on its own under <code>memtrace run</code>;
each page below is <code>memtrace view</code> of that run alone, its figures those of
<code>memtrace report</code> of the same trace. samples/README.md works them out by hand.</p>
<table id="runs">
<thead><tr><th scope="col">run</th><th scope="col">what it shows</th><th scope="col">its report</th></tr></thead>
<tbody>
HTML
	while IFS='|' read -r name what glob; do
		printf '<tr><td><a href="views/%s.html">%s</a></td><td>%s</td><td><code>build/memtrace report %s/%s</code></td></tr>\n' \
			"$name" "$name" "$what" "$D" "$glob"
	done <"$OUT/runs.txt"
	cat <<'HTML'
</tbody>
</table>
</body>
</html>
HTML
}

echo
if has_cmd report; then
	echo "\$ memtrace report $D/fragmentation.bin"
	"$MT" report "$OUT/fragmentation.bin" || exit 1
else
	# Until `memtrace report` exists: the failed calls, from the raw records.
	echo "the failed allocations of $D/fragmentation.bin (memtrace dump):"
	"$MT" dump "$OUT/fragmentation.bin" | grep -E '^alloc .* result=[1-9]' | sed 's/^/  /'
fi

if has_cmd plot; then
	echo
	mkdir -p "$OUT/plots"
	for name in leak fragmentation activations activations-checkpoint stream-ordered \
		pinned-expandable multiprocess; do
		"$MT" plot -o "$OUT/plots/$name" "$OUT/$name".*bin >>"$OUT/plot.log" 2>&1 ||
			{ echo "demo: memtrace plot failed:" >&2; cat "$OUT/plot.log" >&2; exit 1; }
	done
	echo "plots (timeline, address map, top sites per device): $D/plots/SAMPLE/"
	echo "  the report above, drawn: $D/plots/fragmentation/timeline-dev0.png"
fi

if has_cmd view; then
	echo
	mkdir -p "$OUT/views"
	for name in leak fragmentation activations activations-checkpoint stream-ordered \
		pinned-expandable multiprocess; do
		"$MT" view -o "$OUT/views/$name.html" "$OUT/$name".*bin >>"$OUT/view.log" 2>&1 ||
			{ echo "demo: memtrace view failed:" >&2; cat "$OUT/view.log" >&2; exit 1; }
	done
	index >"$OUT/view.html" || exit 1
	echo "open in a browser: $D/view.html (an index of the runs; one page per run in $D/views/,"
	echo "  each on its own time axis)"
fi

echo
echo "next:"
echo "  build/memtrace report $D/leak.bin        the leak candidate, by call site"
echo "  build/memtrace report --json $D/stream-ordered.bin"
echo "  build/memtrace run -- python3 samples/train.py   your own program (on a GPU)"
echo "  samples/README.md works out every figure; README.md explains the report"
