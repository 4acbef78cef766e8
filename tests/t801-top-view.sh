#!/bin/sh
# The interactive view of `memtrace top` in a tmux pane, on a job waiting in
# its phase 2 (rt-top-phases): it shows the three processes and the sites;
# s sorts the sites by count, p shows one process, m marks, a resize to a
# tiny and back to a large pane draws again, q quits with status 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toplib.sh"
cd "$T" || exit 1
command -v tmux >/dev/null 2>&1 || fail "no tmux (scripts/install-deps.sh installs it)"

top_start
top_go
top_wait 1
top_wait 2

unset TMUX
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }
tfail() { tm kill-server 2>/dev/null; fail "$@"; }
tm new-session -d -s top -x 150 -y 40 \
	"TERM=screen '$MEMTRACE' top --interval 0.1 trace.bin 2>top.err; echo \$? >top.rc; sleep 60" ||
	fail "tmux cannot start a session"
# until PATTERN is in the pane (5 s at most)
shows() {
	i=0
	while [ $i -lt 50 ]; do
		tm capture-pane -p -t top >pane 2>/dev/null
		grep -q -- "$1" pane && return 0
		sleep 0.1
		i=$((i + 1))
	done
	tfail "$2: '$1' not in the pane: $(cat pane; cat top.err 2>/dev/null)"
}
shows "3 processes (3 running)" "the header"
# the parent's last record of phase 2, fed once its time is 250 ms old
shows "main (rt-top-phases.c:96)" "the parent's 1 MiB site"
shows "sort: bytes)" "the sites sorted by bytes"
# by bytes the parent's 16 MiB site first, then each worker's 8 MiB (the
# report's sites: one per caller)
tm send-keys -t top s
shows "sort: count)" "s: sorted by count"
# the count order: one allocation each, then by bytes: the parent's 16 MiB
expect_eq "$(awk '/SINCE START/ { getline; print $NF; exit }' pane)" "(rt-top-phases.c:84)" "s: the most allocations first"
tm send-keys -t top p
shows "one process)" "p: one process"
expect_eq "$(awk '/^ *PID/ { on = 1; next } on && NF == 0 { exit } on { n++ } END { print n }' pane)" 1 \
	"p: one process's row"
tm send-keys -t top m
shows "SINCE MARK" "m: the mark"
expect_eq "$(awk '/SINCE MARK/ { getline; print $5, $6; exit }' pane)" "+0 B" "m: no growth since the mark"
tm resize-window -t top -x 30 -y 6 2>/dev/null || tm resize-pane -t top -x 30 -y 6
sleep 0.3
tm resize-window -t top -x 150 -y 40 2>/dev/null || tm resize-pane -t top -x 150 -y 40
shows "SINCE MARK" "drawn again after the resize"
[ -s top.rc ] && tfail "top ended after the resize: $(cat top.rc top.err)"
tm send-keys -t top q
i=0
while [ ! -s top.rc ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tm kill-server 2>/dev/null
expect_eq "$(cat top.rc 2>/dev/null)" 0 "q: top's exit status"
top_go
top_wait 3
top_end
exit 0
