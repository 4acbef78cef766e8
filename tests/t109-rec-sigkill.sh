#!/bin/sh
# SIGKILL at random moments: every trace loads, and holds every event whose
# call had returned (rt-killme logs each returned call before going on),
# and nothing else but the calls in flight (one per thread, 4): a compact
# record (format 2) cut by the kill is never read as an event.
# TRIALS=100 for the long version (make bench runs it).
. "$(dirname "$0")/lib.sh"

trials=${TRIALS:-20}
i=0
while [ $i -lt "$trials" ]; do
	i=$((i + 1))
	rm -f "$T/trace.bin" "$T/returned"
	LD_LIBRARY_PATH=$SIM LD_PRELOAD=$B/libmemtrace.so MEMTRACE_OUTPUT=$T/trace.bin MEMTRACE_DEPTH=16 \
		"$CLIENTS/rt-killme" "$T/returned" &
	pid=$!
	# 20 .. 400 ms, different each trial
	sleep "0.$(printf '%03d' $(( ($(od -An -N2 -tu2 /dev/urandom) % 380) + 20 )))"
	kill -9 $pid
	wait $pid 2>/dev/null
	"$MEMTRACE" dump "$T/trace.bin" >"$T/dump" 2>"$T/dump.err" ||
		fail "trial $i: the trace of a killed process does not load: $(cat "$T/dump.err")"
	# The kill may cut the client's last log line itself: drop an unended one.
	[ -z "$(tail -c 1 "$T/returned")" ] || sed -i '$d' "$T/returned"
	awk '$1 == "alloc" { print "alloc", $2, $3 } $1 == "free" { print "free", $2 }' "$T/returned" | sort >"$T/want"
	awk '($1 == "alloc" || $1 == "free") {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if ($1 == "alloc" && f["result"] == "0") print "alloc", f["addr"], f["bytes"]
		else if ($1 == "free" && f["result"] == "0") print "free", f["addr"] }' "$T/dump" | sort >"$T/have"
	n=$(wc -l <"$T/want")
	[ "$n" -gt 0 ] || fail "trial $i: the client recorded nothing before the kill"
	# every returned call is in the trace (multisets: want minus have is empty)
	missing=$(comm -23 "$T/want" "$T/have" | head -n 5)
	[ -z "$missing" ] || fail "trial $i: $n returned calls, missing from the trace: $missing"
	extra=$(comm -13 "$T/want" "$T/have")
	[ "$(printf '%s' "$extra" | grep -c .)" -le 4 ] ||
		fail "trial $i: events no call returned: $(printf '%s\n' "$extra" | head -n 5)"
	head -n 1 "$T/dump" | grep -q "^# trace '.*': format 2\.2, " || fail "trial $i: not format 2: $(head -n 1 "$T/dump")"
done
