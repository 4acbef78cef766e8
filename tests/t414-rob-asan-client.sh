#!/bin/sh
# A program built with AddressSanitizer, traced (issue 25): ASan's runtime
# resolves its interceptors with dlsym(RTLD_NEXT, ...) before any
# constructor runs, through libmemtrace's dlsym, and until then every libc
# call it intercepts (getcwd, open, dl_iterate_phdr) jumps through an empty
# pointer; the recorder must not start there. rt-basic built with ASan runs
# as without memtrace and its trace holds what the simulator did: 4
# cudaMalloc (1 MiB, 3000 B, 64 MiB, a failed 1 PiB), 4 cudaFree (one a
# double free). Before: the program died of SIGSEGV before main.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
$CC -fsanitize=address -g -I"$ROOT/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" \
	"$ROOT/tests/clients/rt-basic.c" -o "$T/rt-basic-asan" -L"$B/simcuda/runtime" -lcudart \
	2>"$T/cc.err" || skip "$CC cannot build with -fsanitize=address: $(head -n 1 "$T/cc.err")"
# libmemtrace is preloaded ahead of ASan's runtime, which ASan otherwise refuses
export ASAN_OPTIONS=verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}

SIMCUDA_LOG=$T/plain.log sim "$T/rt-basic-asan" >"$T/out.plain" 2>&1 || fail "rt-basic-asan failed without memtrace: $(cat "$T/out.plain")"
traced "$T/rt-basic-asan" >"$T/out" 2>"$T/err" || fail "rt-basic-asan failed under memtrace (exit $?): $(head -n 5 "$T/err")"
diff -u "$T/out.plain" "$T/out" || fail "output differs under memtrace"
same_events "$T/trace.bin" "$T/calls.log"
"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" || fail "dump failed"
expect_eq "$(count '^alloc .* api=cudaMalloc kind=device ' "$T/dump")" 4 "cudaMalloc events"
expect_eq "$(count '^free .* api=cudaFree ' "$T/dump")" 4 "cudaFree events (3 + 1 double free)"
expect_eq "$(count '^exit ' "$T/dump")" 1 "exit record"
exit 0
