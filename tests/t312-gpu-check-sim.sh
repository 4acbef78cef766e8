#!/bin/sh
# t312-gpu-check-sim: scripts/gpu-check.sh --sim, the script prepared for a
# real GPU, runs its steps on the simulated GPU: the demo's traces, whose
# peaks from the report and from the raw records agree, and the PyTorch
# steps with a stand-in python that prints the figures PyTorch would
# (112 MiB) and becomes samples/leak: every row of the summary passes.
. "$(dirname "$0")/lib.sh"
[ -x "$SAMPLES/leak" ] || skip "no $SAMPLES (make tests-build)"

cat >"$T/python" <<PY
#!/bin/sh
case "\$1" in -c) echo "stand-in torch"; exit 0 ;; esac
echo "stand-in: max_memory_allocated=117440512"
echo "stand-in: max_memory_reserved=117440512"
exec "$SAMPLES/leak" >/dev/null
PY
chmod +x "$T/python"
OUT=$T/out PYTHON=$T/python GPU_CHECK_NO_NVCC=1 timeout 300 "$ROOT/scripts/gpu-check.sh" --sim >"$T/log" 2>&1 ||
	fail "gpu-check --sim failed: $(tail -n 30 "$T/log")"
# $OUT holds the summary and one archive of everything else
expect_eq "$(ls "$T/out" | tr '\n' ' ')" "gpu-check.tar.gz summary.md " "what comes back"
mkdir "$T/res" && tar xzf "$T/out/gpu-check.tar.gz" -C "$T/res" || fail "the archive does not unpack"
S=$T/out/summary.md
cmp -s "$S" "$T/res/summary.md" || fail "the archive's summary differs"
for f in "$S" "$T/res/env.txt" "$T/res/gpu-check.log"; do [ -s "$f" ] || fail "no $f"; done
for step in torch-default torch-expandable torch-async train train-checkpoint train-amp train-empty-cache \
	train-expandable-segments train-async-allocator train-workers-2-sharing-strategy-file_system; do
	grep -q "^| $step | 0 | 72 | 112.0 | 112.0 | 112.0 | 112.0 | - | - | 0/- | 41/- | - | ok |$" "$S" || fail "row $step: $(grep "^| $step " "$S")"
	[ -s "$T/res/traces/$step.bin" ] || fail "no trace for $step"
done
for s in leak fragmentation activations activations-checkpoint stream-ordered pinned-expandable; do
	grep -q "^| demo/$s | 0 | .* | ok |$" "$S" || fail "row demo/$s: $(grep "demo/$s " "$S")"
done
grep -q '^| demo | 0 |' "$S" || fail "no demo row"
