#!/bin/sh
# Issue 25 row 14 under memtrace run: `memtrace run --metrics-port P
# --metrics-linger 3` returns the program's exit status as soon as it ends,
# and /metrics still answers after that with the run's final figures (the
# process exited, its peak); without --metrics-linger the endpoint ends
# with the run.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
command -v python3 >/dev/null 2>&1 || skip "no python3"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
scrape() { # PORT -> the answer, or nothing
	python3 - "$1" <<'PY'
import sys, urllib.request
try:
    sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:%s/metrics' % sys.argv[1], timeout=2).read().decode())
except Exception:
    pass
PY
}

port=$(free_port)
env LD_LIBRARY_PATH="$SIM" "$MEMTRACE" run --no-summary -o run.bin --metrics-port "$port" \
	--metrics-linger 3 -- sh -c '"$0" 1 50; exit 7' "$CLIENTS/rt-threads" >out 2>err
expect_eq "$?" 7 "the program's exit status, at once"
scrape "$port" >after
grep -q '^memtrace_up' after || grep -q '^memtrace_' after ||
	fail "no figures on /metrics after the run: '$(head -c 300 after)'; $(cat err)"
grep -q 'state="exited"\|exited' after || fail "the final frame does not say the process exited: $(grep -i state after | head -3)"
sleep 4
expect_eq "$(scrape "$port")" "" "the endpoint is gone after the linger"

port=$(free_port)
env LD_LIBRARY_PATH="$SIM" "$MEMTRACE" run --no-summary -o run2.bin --metrics-port "$port" \
	-- "$CLIENTS/rt-threads" 1 50 >out2 2>err2 || fail "run exited $?: $(cat err2)"
expect_eq "$(scrape "$port")" "" "no linger by default: the endpoint ended with the run"
exit 0
