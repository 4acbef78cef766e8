#!/bin/sh
# t648: memtrace check's category figures (docs/check.md): at dl-torch's
# peak of allocated (48 MiB: parameters 8, gradients 8, optimizer state
# 16, activations 16, temporaries 0 MiB; tests/clients/dl-torch.c) each
# rule holds or fails on the byte; a device scope, a run without PyTorch's
# records and a baseline (a trace, and its report's JSON) as
# docs/check.md says.
. "$(dirname "$0")/lib.sh"
M=1048576

traced "$CLIENTS/dl-torch" run 2>/dev/null || fail "dl-torch run failed"
"$MEMTRACE" check "$T/trace.bin" "parameters_peak == 8MiB" "gradients_peak == 8MiB" \
	"optimizer_state_peak == 16MiB" "activations_peak == 16MiB" "temporaries_peak == 0" \
	>"$T/out" || fail "the category figures: $(cat "$T/out")"
"$MEMTRACE" check "$T/trace.bin" "activations_peak < 16MiB" >"$T/out"
expect_eq "$?" 1 "activations_peak < 16MiB fails"
grep -qx "FAIL activations_peak < 16MiB: activations at the peak of allocated 16.0 MiB ($((16 * M)) B) in the run" "$T/out" ||
	fail "the failure line: $(cat "$T/out")"
"$MEMTRACE" check "$T/trace.bin" "gradients_peak[dev0] <= 1GiB" >"$T/out"
expect_eq "$?" 1 "a device scope fails"
grep -q "per process, over its devices" "$T/out" || fail "a device scope: $(cat "$T/out")"
pid=$("$MEMTRACE" report --json --no-db "$T/trace.bin" | tee "$T/base.json" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["processes"][0]["pid"])')
"$MEMTRACE" check "$T/trace.bin" "optimizer_state_peak[pid:$pid] == 16MiB" >"$T/out" ||
	fail "a pid scope: $(cat "$T/out")"
"$MEMTRACE" check --baseline "$T/base.json" "$T/trace.bin" "parameters_peak <= baseline" \
	"temporaries_peak <= baseline" >"$T/out" || fail "a JSON baseline: $(cat "$T/out")"
"$MEMTRACE" check --baseline "$T/trace.bin" "$T/trace.bin" "activations_peak < baseline" >"$T/out"
expect_eq "$?" 1 "activations_peak < baseline fails against itself"
TRACE=$T/plain.bin traced "$CLIENTS/dl-fw" run >/dev/null 2>&1 || fail "dl-fw run failed"
"$MEMTRACE" check "$T/plain.bin" "activations_peak <= 1GiB" >"$T/out"
expect_eq "$?" 1 "a run without ranges fails"
grep -q "no peak of PyTorch's allocated inside the program's ranges" "$T/out" ||
	fail "without ranges: $(cat "$T/out")"
