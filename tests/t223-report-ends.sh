#!/bin/sh
# How each process ended, in the text, the JSON and the database: exit(3),
# _Exit(4), a forked child's _exit(5) beside its parent's return 0, and a
# process killed by SIGKILL with 2 MiB allocated, whose leak candidate says
# it was interrupted (a killed run's live memory is not proof of a leak).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

run_mode() { # NAME ARGS...
	n=$1; shift
	sim "$MEMTRACE" run --no-summary -o "$n.bin" -- "$CLIENTS/rt-exit" "$@" >"$n.out" 2>"$n.err"
}
run_mode exit exit 3; expect_eq "$?" 3 "exit 3: status"
run_mode uexit _Exit 4; expect_eq "$?" 4 "_Exit 4: status"
run_mode fork fork 5 || fail "fork 5 failed: $(cat fork.err)"
run_mode kill kill; expect_eq "$?" 137 "kill: status"

line() { "$MEMTRACE" report --no-db "$@" | grep -E '^      [0-9]+ events? ' ; }
expect_eq "$(line exit.bin | sed 's/.*long, //')" "exited with status 3" "exit(3), text"
expect_eq "$(line uexit.bin | sed 's/.*long, //')" "ended by _exit(4)" "_Exit(4), text"
expect_eq "$(line kill.bin | sed 's/.*long, //')" \
	"interrupted: killed or crashed (the trace shows no clean exit)" "SIGKILL, text"
expect_eq "$(line fork.bin fork.*.bin | sed 's/.*, //' | sort | tr '\n' '|')" \
	"ended by _exit(5)|exited with status 0|" "fork: the child's _exit(5), the parent's return"

"$MEMTRACE" report --no-db --json kill.bin >kill.json || fail "report --json failed"
"$MEMTRACE" report --no-db --json fork.bin fork.*.bin >fork.json || fail "report --json failed"
pj() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
expect_eq "$(pj kill.json '[(p["ended"], p["exit_status"]) for p in r["processes"]]')" "[('killed', None)]" \
	"SIGKILL, JSON"
expect_eq "$(pj kill.json '[(l["reasons"], l["bytes"], l["interrupted"]) for l in r["leaks"]]')" \
	"[(['live_at_exit'], 2097152, True)]" "SIGKILL: the leak candidate is marked interrupted"
expect_eq "$(pj fork.json 'sorted((p["ended"], p["exit_status"]) for p in r["processes"])')" \
	"[('_exit', 5), ('exit', 0)]" "fork, JSON"
"$MEMTRACE" report --no-db kill.bin | grep -q '^              interrupted: a process holding it did not exit cleanly' ||
	fail "SIGKILL: no 'interrupted' beside the leak candidate"

"$MEMTRACE" report exit.bin >/dev/null || fail "report with a database failed"
expect_eq "$(sqlite3 exit.bin.db "SELECT how, status FROM process_ends")" "exit|3" "exit(3), database"
"$MEMTRACE" report kill.bin >/dev/null || fail "report with a database failed"
expect_eq "$(sqlite3 kill.bin.db "SELECT how, quote(status) FROM process_ends")" "killed|NULL" "SIGKILL, database"
expect_eq "$(sqlite3 kill.bin.db "SELECT exit_bytes, leak_at_exit, interrupted FROM sites WHERE exit_bytes > 0")" \
	"2097152|1|1" "SIGKILL, database: the site is interrupted"
exit 0
