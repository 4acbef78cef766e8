#!/bin/sh
# The simulated driver's cuGetProcAddress(_v2) picks variants like the real
# one: by version, by per-thread flag, base names only; and every exported
# function is reachable through it.
. "$(dirname "$0")/lib.sh"

LD_LIBRARY_PATH=$SIM SIMCUDA_LOOKUP_LOG=$T/lookup.log "$CLIENTS/dl-sim-lookup" >"$T/out" ||
	fail "dl-sim-lookup exited $?"
cat >"$T/expected" <<'END'
"" 0 0 -> 500 1 NULL
cuMemAlloc 2000 0 -> 0 0 cuMemAlloc
cuMemAlloc 3020 0 -> 0 0 cuMemAlloc_v2
cuMemAlloc 13000 2 -> 0 0 cuMemAlloc_v2
cuMemAlloc 1000 0 -> 500 2 NULL
cuMemAlloc_v2 13000 0 -> 500 1 NULL
cuNoSuchFunction 13000 0 -> 500 1 NULL
cuMemAllocAsync 11020 0 -> 0 0 cuMemAllocAsync
cuMemAllocAsync 11020 1 -> 0 0 cuMemAllocAsync
cuMemAllocAsync 11020 2 -> 0 0 cuMemAllocAsync_ptsz
cuMemAllocAsync 11010 2 -> 500 2 NULL
cuGetProcAddress 11030 0 -> 0 0 cuGetProcAddress
cuGetProcAddress 12000 0 -> 0 0 cuGetProcAddress_v2
cuGetProcAddress 11020 0 -> 500 2 NULL
cuCtxGetDevice 2000 0 -> 0 0 cuCtxGetDevice
cuCtxGetDevice 12090 0 -> 0 0 cuCtxGetDevice
cuCtxGetDevice 13000 0 -> 0 0 cuCtxGetDevice_v2
cuStreamSynchronize 2000 2 -> 0 0 cuStreamSynchronize
cuStreamSynchronize 6050 2 -> 0 0 cuStreamSynchronize
cuStreamSynchronize 7000 2 -> 0 0 cuStreamSynchronize_ptsz
cuMemcpyHtoD 13000 0 -> 0 0 cuMemcpyHtoD_v2
cuMemcpyHtoD 13000 2 -> 0 0 cuMemcpyHtoD_v2_ptds
cuStreamGetCtx 12000 2 -> 0 0 cuStreamGetCtx_ptsz
cuStreamGetCtx 12050 2 -> 0 0 cuStreamGetCtx_v2_ptsz
cuCtxCreate 13000 0 -> 0 0 cuCtxCreate_v4
cuMemFreeAsync 13000 2 -> 0 0 cuMemFreeAsync_ptsz
cuInit 2000 0 -> 0 0 cuInit
v1 cuMemAlloc 3020 0 -> 0 cuMemAlloc_v2
v1 cuMemAllocAsync 12000 2 -> 0 cuMemAllocAsync_ptsz
v1 cuMemAlloc_v2 12000 0 -> 500 NULL
null-status 0 same
bad-flags 1
END
diff -u "$T/expected" "$T/out" || fail "look-ups differ"

# The look-up log has one line per call, in order.
expect_eq "$(wc -l <"$T/lookup.log")" 31 "lookup log lines"
expect_eq "$(sed -n 1p "$T/lookup.log")" 'lookup "" 0 0 not_found -' "first log line"
expect_eq "$(sed -n 5p "$T/lookup.log")" 'lookup cuMemAlloc 1000 0 version_not_sufficient -' "log of a too-low version"
expect_eq "$(sed -n 10p "$T/lookup.log")" 'lookup cuMemAllocAsync 11020 2 found cuMemAllocAsync_ptsz' "log of a per-thread look-up"

# Every exported function is in the table under its base name.
nm -D --defined-only "$B/simcuda/driver/libcuda.so.1" | awk '$2 == "T" { print $3 }' >"$T/exports"
[ "$(wc -l <"$T/exports")" -gt 200 ] || fail "too few exports"
LD_LIBRARY_PATH=$SIM "$CLIENTS/dl-sim-lookup" exports <"$T/exports" >"$T/missing" ||
	fail "not reachable through cuGetProcAddress: $(cat "$T/missing")"

# Nothing is exported that the real driver does not export.
stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
if [ -e "$stub" ]; then
	nm -D --defined-only "$stub" | awk '{ print $3 }' | sort >"$T/real"
	sort "$T/exports" | comm -23 - "$T/real" >"$T/extra"
	[ -s "$T/extra" ] && fail "exports the real driver lacks: $(cat "$T/extra")"
fi
exit 0
