#!/bin/sh
# `memtrace run --top` in a process group that is not the terminal's
# foreground one (issue 25 row 13): a plain `timeout` makes its own group,
# and the view's first change of the terminal's modes used to stop the whole
# group with SIGTTOU, the traced job with it (every process in state T),
# until timeout killed it. On a pty (script(1)): under `timeout 5` the job
# finishes, with its own status and output; under `timeout --foreground`
# and with no timeout the view is the full screen one, as before.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
command -v script >/dev/null 2>&1 || skip "no script(1) (util-linux)"
command -v timeout >/dev/null 2>&1 || skip "no timeout(1)"
C=$CLIENTS/rt-rotate

# on_pty NAME COMMAND: COMMAND in sh -c on a fresh pty, its exit status
# in NAME.rc, everything it drew in NAME.pty; never more than 30 s
on_pty() {
	TERM=xterm LD_LIBRARY_PATH=$SIM timeout -s KILL 30 \
		script -qfec "$2; echo \$? >$T/$1.rc" /dev/null >"$1.pty" 2>&1 </dev/null
	[ -s "$1.rc" ] || fail "$1: the job never finished (stopped?): $(ps -eo pid,pgid,stat,comm | grep -E 'memtrace|rt-rotate' | head)"
}

# --- plain timeout: the job runs to its end, well before the 5 s
start=$(date +%s)
on_pty plain "timeout 5 $MEMTRACE run --top -o $T/a.bin -- sh -c '\"\$0\" 1000; exit 4' $C"
end=$(date +%s)
expect_eq "$(cat plain.rc)" 4 "plain timeout: the job's exit status (124: timeout killed it)"
expect_eq "$(cat a.out)" "done after 1000 ms" "plain timeout: the job's output"
[ $((end - start)) -lt 5 ] || fail "plain timeout: took $((end - start)) s"
grep -q "memtrace: wrote $T/a\.[0-9]*\.bin" plain.pty || fail "plain timeout: no end of run: $(tail -c 400 plain.pty)"
grep -q "DEV .*RESERVED" plain.pty || fail "plain timeout: no view drawn: $(tail -c 400 plain.pty)"

# --- the same job in the background of a shell with job control
on_pty bg "set -m; $MEMTRACE run --top -o $T/b.bin -- $C 800 & wait \$!"
expect_eq "$(cat bg.rc)" 0 "background: the job's exit status"
expect_eq "$(cat b.out)" "done after 800 ms" "background: the job's output"

# --- timeout --foreground, and none: the full screen view (ncurses puts
# the terminal in its alternate screen) and the job's status
for how in "timeout --foreground 5" ""; do
	rm -f fg.rc
	on_pty fg "$how $MEMTRACE run --top -o $T/c.bin -- $C 800"
	expect_eq "$(cat fg.rc)" 0 "foreground ($how): the job's exit status"
	expect_eq "$(cat c.out)" "done after 800 ms" "foreground ($how): the job's output"
	grep -q "$(printf '\033\[?1049h')" fg.pty || fail "foreground ($how): not the full screen view"
done
exit 0
