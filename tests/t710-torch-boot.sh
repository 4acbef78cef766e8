#!/bin/sh
# t710-torch-boot: memtrace's Python bootstrap leaves the program as it
# would be without memtrace: the user's sitecustomize still runs, sys.path
# is the same and sys.modules differs only by memtrace's own modules;
# `python -I` and `-S` are left alone; torch is never imported for a program
# that does not import it, and CUDA is not initialized by `import torch`;
# MEMTRACE_TORCH=0 and --no-torch switch the hook off. On the test double
# of torch (tests/torchdouble).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
DOUBLE=$ROOT/tests/torchdouble
[ -d "$DOUBLE/torch" ] || skip "no torch test double"
cd "$T" || exit 1

mkdir user
echo 'print("user sitecustomize ran")' >user/sitecustomize.py
cat >show.py <<'PY'
import sys
print("path", sys.path)
print("modules", " ".join(sorted(m for m in sys.modules)))
PY

# The user's sitecustomize runs; sys.path is the same; sys.modules has
# memtrace_torch more and nothing else.
PYTHONPATH=$T/user python3 show.py >plain.out 2>&1
PYTHONPATH=$T/user traced python3 show.py >mt.out 2>mt.err || fail "show.py under memtrace: $(cat mt.err)"
expect_eq "$(head -n 1 mt.out)" "user sitecustomize ran" "the user's sitecustomize under memtrace"
expect_eq "$(grep '^path' mt.out)" "$(grep '^path' plain.out)" "sys.path under memtrace"
tr ' ' '\n' <plain.out | grep -v '^path' >mods.plain
tr ' ' '\n' <mt.out | grep -v '^path' >mods.mt
expect_eq "$(diff mods.plain mods.mt | grep '^[<>]' | tr '\n' ' ')" "> memtrace_torch " \
	"sys.modules under memtrace, beside the user's sitecustomize"

# Without a user sitecustomize, memtrace's bootstrap is the module named
# sitecustomize (the import machinery needs one there).
python3 show.py >plain2.out 2>&1
traced python3 show.py >mt2.out 2>mt.err || fail "show.py under memtrace: $(cat mt.err)"
expect_eq "$(grep '^path' mt2.out)" "$(grep '^path' plain2.out)" "sys.path without a user sitecustomize"
tr ' ' '\n' <plain2.out | grep -v '^path' >mods.plain
tr ' ' '\n' <mt2.out | grep -v '^path' >mods.mt
expect_eq "$(diff mods.plain mods.mt | grep '^[<>]' | tr '\n' ' ')" "> memtrace_torch > sitecustomize " \
	"sys.modules without a user sitecustomize"

# An error in the user's sitecustomize is reported by site as usual.
echo 'raise ValueError("boom")' >user/sitecustomize.py
PYTHONPATH=$T/user python3 -c 'print("main")' >plain3.out 2>&1
PYTHONPATH=$T/user traced python3 -c 'print("main")' 2>&1 | grep -v '^memtrace: ' >mt3.out
expect_eq "$(cat mt3.out)" "$(cat plain3.out)" "a failing user sitecustomize"
echo 'print("user sitecustomize ran")' >user/sitecustomize.py

# python -I and -S: memtrace's Python side never runs. (-S still puts
# PYTHONPATH, and so the bootstrap's directory, on sys.path: nothing there
# is imported.)
for flag in -I -S; do
	PYTHONPATH=$T/user python3 $flag show.py >plain.out 2>&1
	PYTHONPATH=$T/user traced python3 $flag show.py 2>&1 | grep -v '^memtrace: ' |
		sed "s|'$ROOT/python', ||" >mt.out
	expect_eq "$(cat mt.out)" "$(cat plain.out)" "python3 $flag under memtrace"
done

# torch is not imported for a program that does not import it, even where
# it can be found.
PYTHONPATH=$DOUBLE traced python3 -c 'import sys; print("torch" in sys.modules)' >mt.out 2>/dev/null
expect_eq "$(cat mt.out)" "False" "torch imported by memtrace"

# import torch initializes nothing; the hook waits in torch's own queue of
# lazy-init calls; the first allocation arms it and its events reach the
# trace.
cat >lazy.py <<'PY'
import torch
print("initialized", torch.cuda.is_initialized(), "queued",
      sum(c.__module__ == "memtrace_torch" for c, _ in torch.cuda._queued_calls))
t = torch.empty(1024, dtype=torch.uint8, device="cuda")
print("initialized", torch.cuda.is_initialized())
PY
PYTHONPATH=$DOUBLE traced python3 lazy.py >mt.out 2>mt.err || fail "lazy.py under memtrace: $(cat mt.err)"
expect_eq "$(cat mt.out | tr '\n' ' ')" "initialized False queued 1 initialized True " "CUDA init under memtrace"
"$MEMTRACE" dump "$T/trace.bin" >dump.txt || fail "dump failed"
expect_eq "$(count '^fw_event .*action=alloc addr=0x[0-9a-f]+ size=1024 ' dump.txt)" 1 "the alloc event"
expect_eq "$(count '^fw_info .*framework=torch.*version=2\.11\.0\+testdouble.*backend=native' dump.txt)" 1 \
	"the note on torch"

# Without memtrace's library (the bootstrap on PYTHONPATH by hand) the hook
# queues nothing.
PYTHONPATH=$ROOT/python:$DOUBLE MEMTRACE_TORCH=1 sim python3 lazy.py >plain.out 2>&1 ||
	fail "lazy.py without memtrace: $(cat plain.out)"
expect_eq "$(head -n 1 plain.out)" "initialized False queued 0" "the hook without memtrace's library"

# Switched off: MEMTRACE_TORCH=0 or --no-torch. No hook, no framework record.
for how in env opt; do
	rm -f "$T/trace.bin"
	if [ $how = env ]; then
		PYTHONPATH=$DOUBLE MEMTRACE_TORCH=0 traced python3 lazy.py >mt.out 2>/dev/null
	else
		PYTHONPATH=$DOUBLE sim "$MEMTRACE" run --no-summary --no-torch -o "$T/trace.bin" -- \
			python3 lazy.py >mt.out 2>/dev/null
	fi
	expect_eq "$(head -n 1 mt.out)" "initialized False queued 0" "queued calls, switched off ($how)"
	"$MEMTRACE" dump "$T/trace.bin" >dump.txt || fail "dump failed ($how)"
	expect_eq "$(count '^fw_' dump.txt)" 0 "framework records, switched off ($how)"
	expect_eq "$(count '^alloc .*api=cudaMalloc' dump.txt)" 1 "the CUDA-level segment, switched off ($how)"
done

"$MEMTRACE" run --help >help.out || fail "run --help"
grep -q -- '--no-torch' help.out || fail "run --help does not list --no-torch"
grep -q -- '--torch-snapshot' help.out || fail "run --help does not list --torch-snapshot"
exit 0
