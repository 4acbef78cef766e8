#!/bin/sh
# Issue 25 row 14: the end of a job does not take its figures off /metrics
# at once, and q says the job goes on. `memtrace top --metrics-port
# --metrics-linger 2` on a finished trace (no terminal: it ends with the
# job) still answers a scrape with the final figures after its frame, then
# exits by itself; --metrics-linger 0 does not wait. In a tmux pane, q
# on a job still running says it keeps running.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
command -v python3 >/dev/null 2>&1 || skip "no python3"
command -v tmux >/dev/null 2>&1 || fail "no tmux (scripts/install-deps.sh installs it)"

top_start
top_wait 1
unset TMUX
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }
tm new-session -d -s top -x 150 -y 40 \
	"TERM=screen '$MEMTRACE' top --interval 0.1 trace.bin 2>top.err; echo \$? >top.rc; sleep 60" ||
	fail "tmux cannot start a session"
i=0
while ! tm capture-pane -p -t top 2>/dev/null | grep -q "processes" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tm send-keys -t top q
i=0
while [ ! -s top.rc ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tm kill-server 2>/dev/null
expect_eq "$(cat top.rc 2>/dev/null)" 0 "q: top's exit status"
grep -q "the job keeps running" top.err || fail "q said nothing of the job: '$(cat top.err)'"
top_go; top_wait 2; top_go; top_wait 3; top_end

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s)
"$MEMTRACE" top --metrics-port "$port" --metrics-linger 2 trace.bin >frame 2>linger.err </dev/null &
TOP=$!
python3 - "$port" >scrape 2>scrape.err <<'PY'
import sys, time, urllib.request
for i in range(50):
    try:
        sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:%s/metrics' % sys.argv[1], timeout=1).read().decode())
        break
    except OSError:
        time.sleep(0.1)
PY
i=0
while [ ! -s frame ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
# a scrape after the frame of the end
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=1).read().decode())' \
	"http://127.0.0.1:$port/metrics" >after 2>after.err || fail "no /metrics after the job's end: $(cat after.err linger.err)"
grep -q '^memtrace_processes{state="running"} 0$' after || fail "not the final figures: $(grep processes after)"
grep -q '^memtrace_process_running{.*state="exited"} 0$' after || fail "no exited process in the final figures"
grep -q "last figures stay on /metrics for 2 s" linger.err || fail "the linger not said: $(cat linger.err)"
wait $TOP || fail "top --metrics-linger 2 failed: $(cat linger.err)"
took=$(($(date +%s) - start))
[ $took -le 8 ] || fail "lingered $took s for 2"
start=$(date +%s)
timeout 10 "$MEMTRACE" top --metrics-port "$port" --metrics-linger 0 trace.bin >/dev/null 2>&1 </dev/null ||
	fail "top --metrics-linger 0"
[ $(($(date +%s) - start)) -le 3 ] || fail "--metrics-linger 0 waited"
exit 0
