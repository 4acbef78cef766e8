# tests/toplib.sh - sourced by the `memtrace top` cases (t80x): runs
# rt-top-phases under `memtrace run` in the background and steps it
# through its phases with two fifos, so a case looks at the traces at
# exactly the moments it chooses. Needs lib.sh first.

# top_start [RUN OPTIONS...]: starts the job; its trace is $T/trace.bin.
top_start() {
	mkfifo "$T/ready" "$T/go" || fail "mkfifo"
	SHM_NAME=/memtrace-t80x-$$
	sim "$MEMTRACE" run --no-summary "$@" -o "$T/trace.bin" -- \
		"$CLIENTS/rt-top-phases" "$T/ready" "$T/go" "$SHM_NAME" >"$T/job.out" 2>"$T/job.err" &
	JOB=$!
	# lib.sh's cleanup, after the job's
	trap 'rc=$?; kill $JOB 2>/dev/null; rm -f "/dev/shm$SHM_NAME"
	      if [ $rc = 0 ] || [ $rc = 77 ]; then rm -rf "$T"; else echo "  (kept $T)"; fi' EXIT
	exec 3<"$T/ready" 4>"$T/go"
}

# top_wait N: waits (at most 20 s) until the job says it finished phase N.
top_wait() {
	line=
	read -r line <&3 || fail "the job ended before phase $1: $(cat "$T/job.err")"
	expect_eq "$line" "$1" "phase"
}

# top_go: lets the job go on to its next phase.
top_go() { printf x >&4; }

# top_end: lets the job finish and waits for it.
top_end() {
	printf x >&4
	exec 3<&- 4>&-
	wait $JOB || fail "the job failed: $(cat "$T/job.err")"
}
