#!/bin/sh
# A failure is named by the API that returned its code, with the number:
# rt-rep-peak's cudaMalloc of 1 PiB returns cudaErrorMemoryAllocation (the
# driver's CUDA_ERROR_OUT_OF_MEMORY inside it is the runtime's to report:
# one event, recorded at the runtime level); drv-rep-oom's cuMemAlloc_v2 of
# 1 PiB returns CUDA_ERROR_OUT_OF_MEMORY; a code in neither table (the
# first trace with its result poked to 99) is "unknown error (99)".
# Text, JSON and the database's cuda_errors table say the same.
. "$(dirname "$0")/lib.sh"

command -v sqlite3 >/dev/null || fail "no sqlite3 shell (scripts/install-deps.sh installs it)"
cd "$T" || exit 1
jnum() { grep -m1 "\"$1\": " "$2" | sed 's/.*": //; s/,$//'; }
# the failed events of a database, named by the query of docs/schema.md
named() {
	sqlite3 "$1" "SELECT e.id, a.name AS api, e.bytes, e.result, c.name AS error
		FROM events e JOIN apis a ON a.id = e.api
		LEFT JOIN cuda_errors c ON c.code = e.result
		  AND c.api = CASE WHEN e.flags & 0x80 THEN 'runtime' ELSE 'driver' END
		WHERE e.result != 0 ORDER BY e.id"
}
# report FILE: text in FILE.txt, JSON in FILE.json, the database beside FILE
report() {
	"$MEMTRACE" report "$1" >"$1.txt" 2>err || fail "report of $1 exited $?: $(cat err)"
	"$MEMTRACE" report --json "$1" >"$1.json" 2>err || fail "report --json of $1 exited $?: $(cat err)"
	sed -n '/^  "failures"/,/^  \]/p' "$1.json" >"$1.fail"
}

# --- the runtime: one failed event, with the runtime's flag and code
TRACE=rt.bin traced "$CLIENTS/rt-rep-peak" >out 2>err || fail "rt-rep-peak failed: $(cat err)"
"$MEMTRACE" dump rt.bin >rt.dump || fail "dump of rt.bin failed"
expect_eq "$(count ' result=[1-9]' rt.dump)" 1 "runtime: failed events"
expect_eq "$(count '^alloc .* api=cudaMalloc .* addr=0x0 bytes=1125899906842624 result=2\(runtime\) ' rt.dump)" 1 \
	"runtime: the failed cudaMalloc, recorded with its cudaError_t"
report rt.bin
expect_eq "$(grep -c 'cudaMalloc of 1.00 PiB on device 0: cudaErrorMemoryAllocation (2)$' rt.bin.txt)" 1 "runtime: text"
expect_eq "$(jnum error rt.bin.fail) $(jnum error_name rt.bin.fail) $(jnum error_api rt.bin.fail)" \
	'2 "cudaErrorMemoryAllocation" "runtime"' "runtime: JSON"
# the recorder still samples the device right after the failure
[ "$(jnum device_free_bytes rt.bin.fail)" != null ] || fail "runtime: no memory sample after the failure"
expect_eq "$(named rt.bin.db)" "10|cudaMalloc|1125899906842624|2|cudaErrorMemoryAllocation" "runtime: database"

# --- the driver
TRACE=drv.bin traced "$CLIENTS/drv-rep-oom" >out 2>err || fail "drv-rep-oom failed: $(cat err)"
report drv.bin
expect_eq "$(grep -c 'cuMemAlloc_v2 of 1.00 PiB on device 0: CUDA_ERROR_OUT_OF_MEMORY (2)$' drv.bin.txt)" 1 "driver: text"
expect_eq "$(jnum error drv.bin.fail) $(jnum error_name drv.bin.fail) $(jnum error_api drv.bin.fail)" \
	'2 "CUDA_ERROR_OUT_OF_MEMORY" "driver"' "driver: JSON"
expect_eq "$(named drv.bin.db)" "1|cuMemAlloc_v2|1125899906842624|2|CUDA_ERROR_OUT_OF_MEMORY" "driver: database"

# --- an unknown code: the result of the one event with bytes 2^50, a
# compact record (format 2): its bytes are the varint 80 80 80 80 80 80 80
# 02, then its stack id (one byte: a new call site), then its result
# (cudaErrorMemoryAllocation, one byte 02), made 99 (no code has it)
off=$(od -An -v -tu1 -w1 rt.bin | awk '{ b[NR - 1] = $1 + 0 } END {
	for (i = 0; i + 10 <= NR; i++) {
		ok = b[i + 7] == 2
		for (k = 0; k < 7 && ok; k++)
			if (b[i + k] != 128)
				ok = 0
		if (ok && b[i + 9] == 2) { at = i + 9; n++ }
	}
	if (n == 1) print at }')
[ -n "$off" ] || fail "cannot find the failed event in rt.bin"
cp rt.bin unk.bin
printf '\143' | dd of=unk.bin bs=1 seek="$off" conv=notrunc 2>/dev/null    # 99
"$MEMTRACE" dump unk.bin >unk.dump || fail "dump of unk.bin failed"
expect_eq "$(count ' result=99\(runtime\) ' unk.dump)" 1 "unknown: the poked event"
report unk.bin
expect_eq "$(grep -c 'cudaMalloc of 1.00 PiB on device 0: unknown error (99)$' unk.bin.txt)" 1 "unknown: text"
expect_eq "$(jnum error unk.bin.fail) $(jnum error_name unk.bin.fail) $(jnum error_api unk.bin.fail)" \
	'99 null "runtime"' "unknown: JSON"
expect_eq "$(named unk.bin.db)" "10|cudaMalloc|1125899906842624|99|" "unknown: database"

# --- the table: every code of both lists, once per API
list=$ROOT/analyze/model/cuda-errors-list.h
ndrv=$(sed -n '/^#define CUDA_DRIVER_ERRORS/,/^$/p' "$list" | grep -c '^	X(')
nrt=$(sed -n '/^#define CUDA_RUNTIME_ERRORS/,/^$/p' "$list" | grep -c '^	X(')
[ "$ndrv" -gt 0 ] && [ "$nrt" -gt 0 ] || fail "cannot count the lists in $list"
expect_eq "$(sqlite3 rt.bin.db "SELECT api, count(*), count(DISTINCT code) FROM cuda_errors GROUP BY api ORDER BY api")" \
	"driver|$ndrv|$ndrv
runtime|$nrt|$nrt" "cuda_errors rows"
expect_eq "$(sqlite3 rt.bin.db "SELECT api, name FROM cuda_errors WHERE code IN (0, 2, 35) ORDER BY code, api")" \
	"driver|CUDA_SUCCESS
runtime|cudaSuccess
driver|CUDA_ERROR_OUT_OF_MEMORY
runtime|cudaErrorMemoryAllocation
runtime|cudaErrorInsufficientDriver" "cuda_errors: codes 0, 2 and 35"
exit 0
