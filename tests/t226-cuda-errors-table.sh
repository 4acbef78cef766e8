#!/bin/sh
# analyze/model/cuda-errors-list.h is what scripts/gen-cuda-errors.sh makes
# of the CUDA headers under CUDA_HOME (skipped without them): the same
# lines, and values that the compiler agrees with, code by code.
. "$(dirname "$0")/lib.sh"

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
list=$ROOT/analyze/model/cuda-errors-list.h
[ -r "$CUDA_HOME/include/cuda.h" ] && [ -r "$CUDA_HOME/include/driver_types.h" ] ||
	skip "no cuda.h and driver_types.h under $CUDA_HOME/include"
cd "$T" || exit 1

CUDA_HOME=$CUDA_HOME "$ROOT/scripts/gen-cuda-errors.sh" >list.h 2>err ||
	fail "gen-cuda-errors.sh exited $?: $(cat err)"
diff -u "$list" list.h >list.diff ||
	fail "cuda-errors-list.h is not up to date with the headers (run scripts/gen-cuda-errors.sh >$list):
$(head -n 20 list.diff)"

# each X(code, name) is the header's value of name
cat >check.c <<EOF
#include <cuda.h>
#include <driver_types.h>
#include "$list"
#define SAME(code, name) _Static_assert((code) == (name), #name);
CUDA_DRIVER_ERRORS(SAME)
CUDA_RUNTIME_ERRORS(SAME)
EOF
${CC:-cc} -std=gnu11 -I"$CUDA_HOME/include" -c check.c -o check.o 2>err ||
	fail "a code of cuda-errors-list.h differs from the headers: $(head -n 5 err)"

# an enumerator the script cannot read stops it, rather than drop a code
mkdir -p fake/include
sed 's/^\( *CUDA_ERROR_OUT_OF_MEMORY *\)= *2,/\1= (1 + 1),/' "$CUDA_HOME/include/cuda.h" >fake/include/cuda.h
cp "$CUDA_HOME/include/driver_types.h" fake/include/
grep -q '= (1 + 1),' fake/include/cuda.h || fail "cannot make the unreadable enumerator"
CUDA_HOME=$T/fake "$ROOT/scripts/gen-cuda-errors.sh" >bad.h 2>err && fail "an unreadable enumerator was accepted"
grep -q 'cannot read enumerator "CUDA_ERROR_OUT_OF_MEMORY = (1 + 1)"' err || fail "wrong message: $(cat err)"
exit 0
