#!/bin/sh
# t221-report-progress: a report that takes more than a second shows its
# progress on a terminal, one line rewritten in place ("memtrace: loading
# 42%") and cleared at the end; with stderr in a file it prints nothing.
# The terminal is a tmux pane (scripts/install-deps.sh installs tmux), with
# the report's stdout in a file; the pane is read every 0.1 s.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null 2>&1 || fail "no tmux (scripts/install-deps.sh installs it)"
cd "$T" || exit 1

# 4 M events: about 1-1.5 s of report with the database on 2 cores
# (bench/RESULTS.md), and progress shown after 200 ms rather than 1 s
# (MEMTRACE_PROGRESS_AFTER_MS), so the line is seen however fast the machine
export MEMTRACE_PROGRESS_AFTER_MS=200
LD_LIBRARY_PATH=$SIM MEMTRACE_DEPTH=2 "$MEMTRACE" run -o big.bin -- \
	"$CLIENTS/rt-threads" 4 500000 >/dev/null 2>run.err || fail "rt-threads failed: $(cat run.err)"

# stderr a file: nothing there, however long it takes
start=$(date +%s%N)
"$MEMTRACE" report --db quiet.db big.bin >quiet.txt 2>quiet.err || fail "report failed: $(cat quiet.err)"
ms=$((($(date +%s%N) - start) / 1000000))
[ -s quiet.err ] && fail "progress on a stderr that is not a terminal: $(od -c quiet.err | head -3)"
[ "$ms" -gt 600 ] || fail "the report took $ms ms: too short to show progress (a bigger trace is needed)"

# stderr a terminal
unset TMUX
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }
tfail() { tm kill-server 2>/dev/null; fail "$@"; }
tm new-session -d -s p -x 100 -y 10 \
	"'$MEMTRACE' report --db tty.db big.bin >tty.txt; echo \$? >tty.rc; sleep 60" ||
	fail "tmux cannot start a session"
i=0
: >seen
while [ ! -s tty.rc ] && [ $i -lt 600 ]; do
	tm capture-pane -p -t p >>seen 2>/dev/null
	sleep 0.1
	i=$((i + 1))
done
sleep 0.3
final=$(tm capture-pane -p -t p)
tm kill-server 2>/dev/null
expect_eq "$(cat tty.rc 2>/dev/null)" 0 "report on a terminal: exit status"
cmp -s quiet.txt tty.txt || fail "the report differs with stderr on a terminal"
grep -Eq '^memtrace: loading [0-9]{1,3}%' seen ||
	fail "no 'memtrace: loading N%' line seen; the pane showed: $(sort -u seen | head -5)"
bad=$(grep -v '^$' seen | grep -Ev '^memtrace: (loading|replaying to the peak|shared memory) [0-9]{1,3}% *$' | head -3)
[ -z "$bad" ] || fail "other lines in the pane: $bad"
[ "$(grep -v '^$' seen | sort -u | wc -l)" -ge 2 ] || fail "the line was not updated: $(sort -u seen)"
[ -z "$(echo "$final" | tr -d ' \n')" ] || fail "the line was not cleared at the end: '$final'"
exit 0
