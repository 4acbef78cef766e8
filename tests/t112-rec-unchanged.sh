#!/bin/sh
# The traced program's behaviour is unchanged: for every client, the same
# output (pointers included: the simulator is deterministic) and the same
# exit status with and without memtrace, and the same calls in the
# simulator's log (host memory addresses and pool and VMM handles, which are
# host pointers, masked: they follow ASLR).
. "$(dirname "$0")/lib.sh"

for c in rt-basic drv-direct dl-dlsym dl-procaddr drv-vmm rt-pools; do
	SIMCUDA_LOG=$T/plain.log sim "$CLIENTS/$c" >"$T/plain.out" 2>&1
	plain=$?
	SIMCUDA_LOG=$T/traced.log sim "$MEMTRACE" run -o "$T/$c.bin" -- "$CLIENTS/$c" >"$T/traced.out" 2>"$T/traced.err"
	traced=$?
	expect_eq "$traced" "$plain" "$c exit status"
	diff -u "$T/plain.out" "$T/traced.out" >/dev/null || fail "$c: output differs under memtrace"
	mask='s/ pid=[0-9]*$//; /kind=(managed|host|host_register|array|pool|pool_grow|pool_shrink|vmm_phys|vmm_retain) /s/addr=0x[0-9a-f]+/addr=HOST/'
	sed -E "$mask" "$T/plain.log" >"$T/plain.calls"
	sed -E "$mask" "$T/traced.log" >"$T/traced.calls"
	diff -u "$T/plain.calls" "$T/traced.calls" >/dev/null || fail "$c: the driver saw different calls under memtrace"
	rm -f "$T/plain.log" "$T/traced.log"
done
