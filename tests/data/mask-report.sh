#!/bin/sh
# mask-report.sh < REPORT: a text or JSON report with what changes from run
# to run masked (pids, thread ids, times, addresses, host names), for the
# golden comparisons of tests/t216-report-golden.sh.
sed -E \
	-e 's/"(pid|ppid|tid)": [0-9]+/"\1": PID/g' \
	-e 's/"([a-z_]*_ns)": [0-9]+/"\1": NS/g' \
	-e 's/"(hostname|exe|command|trace|database)": "[^"]*"/"\1": "X"/g' \
	-e 's/"cached_share_mean": [0-9.]+/"cached_share_mean": X/' \
	-e 's/^( *)"[^"]*\/[^"]*"(,?)$/\1"X"\2/' \
	-e 's/0x[0-9a-f]+/0xADDR/g' \
	-e 's/pid [0-9]+/pid PID/g' \
	-e 's/\+[0-9.]+ (us|ms|s)\b/+TIME/g' \
	-e 's/[0-9.]+ (us|ms|s) long/TIME long/g' \
	-e 's/(processes?), [0-9.]+ (us|ms|s),/\1, TIME,/' \
	-e 's/[0-9]+% on average/N% on average/'
