#!/bin/sh
# bench/torch-hooks.sh [CALLS STEPS] - what memtrace's PyTorch hooks
# (python/memtrace_hooks.py, docs/torch.md) cost the program: the CPU time
# of bench/torch-hooks.py's loops (CALLS forwards of 25 module calls,
# default 4000; STEPS training steps of 100 parameters, default 400) in
# three modes, interleaved, ROUNDS (5) rounds, medians: without memtrace,
# under memtrace with MEMTRACE_TORCH_HOOKS=0, and with the hooks. The
# hooks' cost is the last minus the second (memtrace's own tracing of the
# allocator is in both). On the torch test double over the simulated CUDA
# (a step there also takes the categories note: new gradients every step)
# and on real PyTorch on the CPU where $PY (/usr/bin/python3) has it
# (Debian's 1.13: no optimizer step hooks, no categories without CUDA).
# Prints a markdown table, microseconds per module call and per step.
set -u
cd "$(dirname "$0")/.." || exit 1
B=build
CALLS=${1:-4000}
STEPS=${2:-400}
ROUNDS=${ROUNDS:-5}
PY=${PY:-/usr/bin/python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LD_LIBRARY_PATH=$B/simcuda/driver:$B/simcuda/runtime

med() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] }'; }
# us PYTHON MODE WHAT N: microseconds per unit of one run
us() {
	case $2 in
	bare) "$1" bench/torch-hooks.py "$3" "$4" ;;
	off) MEMTRACE_TORCH_HOOKS=0 $B/memtrace run --no-summary -o "$TMP/t.bin" -- "$1" bench/torch-hooks.py "$3" "$4" ;;
	on) $B/memtrace run --no-summary -o "$TMP/t.bin" -- "$1" bench/torch-hooks.py "$3" "$4" ;;
	esac 2>/dev/null | sed -n 's/cpu_s=\([0-9.]*\) count=\([0-9]*\)/\1 \2/p' | awk '{ printf "%.3f\n", 1e6 * $1 / $2 }'
	rm -f "$TMP"/t*.bin
}

echo "| torch | per | without memtrace us | memtrace, hooks off us | hooks on us | the hooks' cost us |"
echo "| --- | --- | --- | --- | --- | --- |"
row() { # LABEL PYTHON WHAT N
	: >"$TMP/bare"; : >"$TMP/off"; : >"$TMP/on"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		for m in bare off on; do us "$2" $m "$3" "$4" >>"$TMP/$m"; done
	done
	paste "$TMP/off" "$TMP/on" | awk '{ print $2 - $1 }' >"$TMP/cost"
	if [ "$3" = calls ]; then per="module call"; else per="step"; fi
	echo "| $1 | $per | $(med <"$TMP/bare") | $(med <"$TMP/off") | $(med <"$TMP/on") | $(med <"$TMP/cost") |"
}
PYTHONPATH=tests/torchdouble row "test double 2.11" python3 calls "$CALLS"
PYTHONPATH=tests/torchdouble row "test double 2.11" python3 steps "$STEPS"
if [ -x "$PY" ] && "$PY" -c 'import torch' 2>/dev/null; then
	v=$("$PY" -c 'import torch; print(torch.__version__)')
	row "$v CPU" "$PY" calls "$CALLS"
	row "$v CPU" "$PY" steps "$STEPS"
fi
