#!/bin/sh
# Versions, device properties, cudaMemGetInfo, error names and strings (the
# real runtime's), and the runtime without a driver: every call that needs
# one fails with cudaErrorInsufficientDriver (35), cudaDriverGetVersion
# says 0.
. "$(dirname "$0")/lib.sh"

cat >"$T/info.expected" <<'END'
cudaRuntimeGetVersion 0
runtime 13000
cudaDriverGetVersion 0
driver 13000
cudaGetDeviceProperties 0
name 'Simulated GPU (memtrace simcuda)' totalGlobalMem 85899345920 cc 9.0
cudaMemGetInfo 0
cudaMalloc(64MiB) 0
cudaMemGetInfo 0
free went down by 64 MiB, total 85899345920
cudaFree 0
0 cudaSuccess: no error
1 cudaErrorInvalidValue: invalid argument
2 cudaErrorMemoryAllocation: out of memory
35 cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version
101 cudaErrorInvalidDevice: invalid device ordinal
999 cudaErrorUnknown: unknown error
12345 unrecognized error code: unrecognized error code
END
sim "$CLIENTS/rt-sim-api" info >"$T/out" 2>&1 || fail "rt-sim-api info exited $?"
diff -u "$T/info.expected" "$T/out" || fail "rt-sim-api info: output differs"

# Without a driver: only the runtime on the library path (a machine with a
# real libcuda.so.1 installed would find that one instead).
if { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	echo "a libcuda.so.1 is installed: not checking the runtime without a driver"
	exit 0
fi
cat >"$T/nodriver.expected" <<'END'
cudaMalloc 35
cudaGetDeviceCount 35
count 0
cudaDriverGetVersion 0
driver 0
cudaGetLastError 35
END
LD_LIBRARY_PATH=$B/simcuda/runtime "$CLIENTS/rt-sim-api" nodriver >"$T/out" 2>&1 || fail "rt-sim-api nodriver exited $?"
diff -u "$T/nodriver.expected" "$T/out" || fail "rt-sim-api nodriver: output differs"
