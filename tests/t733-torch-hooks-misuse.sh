#!/bin/sh
# t733-torch-hooks-misuse: the PyTorch hooks (python/memtrace_hooks.py)
# where programs are not tidy, on the test double: a forward that raises
# (caught by the program, as an OOM retry does) closes its ranges at once
# where torch runs always_call forward hooks (2.1 and later), and at the
# next call of its root on 1.13 (TORCHDOUBLE_VERSION=1.13: no always_call,
# no optimizer step hooks, so no "optimizer" phase and the step ends at
# _optimizer_step_code); a module whose named_modules() raises gets its
# class name; a thread's module calls are a "forward" phase of that
# thread; the program's output is the same in every case.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/hookslib.sh"
command -v python3 >/dev/null || skip "no python3"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || skip "python3 older than 3.8"
cd "$T" || exit 1
# the marker API, as a project copies it (docs/units.md): the program then
# runs without memtrace too
cp "$ROOT/python/memtrace.py" . || exit 1

cat >prog.py <<'PY'
import threading

import memtrace
import torch


class Bad(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("out of memory (a test)")
        return x


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bad = Bad()

    def forward(self, x):
        return self.bad(x)


class Child(torch.nn.Module):
    def forward(self, x):
        return x


class Named(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def named_modules(self, *args, **kwargs):
        raise RuntimeError("no names")

    def forward(self, x):
        return self.child(x)


class Threaded(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x):
        t = threading.Thread(target=self.child, args=(x,))
        t.start()
        t.join()
        return x


class SGD(torch.optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {})

    def step(self):
        pass


m = M()
x = torch.empty(16, dtype=torch.uint8, device="cuda")
try:
    m(x)
except RuntimeError as e:
    print("caught:", e)
memtrace.mark("caught")
print("again:", m(x) is x)
print("named:", Named()(x) is x)
print("threaded:", Threaded()(x) is x)
torch.empty(4, dtype=torch.float32, device="cuda").backward()
SGD([]).step()
print("done")
PY
pyd prog.py >plain.out 2>plain.err || fail "prog.py: $(cat plain.err)"
printf 'caught: out of memory (a test)\nagain: True\nnamed: True\nthreaded: True\ndone\n' | diff -u - plain.out ||
	fail "prog.py's own output"

# run NAME [VAR=VALUE]: prog.py under memtrace, its output checked, its
# range records in NAME.ranges
run() {
	env ${2:-X=} PYTHONPATH="$TD" PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH="$SIM" \
		"$MEMTRACE" run --no-summary -o "$1.bin" -- python3 prog.py >"$1.out" 2>"$1.err" || fail "$1: $(cat "$1.err")"
	diff -u plain.out "$1.out" || fail "$1: the output changed under memtrace"
	"$MEMTRACE" dump "$1.bin" >"$1.dump" || fail "dump $1.bin"
	RANGES_TID=1 ranges "$1.dump" >"$1.ranges"
}
# the forward that raised: closed at once (2.x: before the program's mark)
# or when its root is called again (1.13: after it)
raised_then() {
	cat <<EOS
t1 start torch torch step 1 id=1
t1 push torch torch forward
t1 push torch torch.module M
t1 push torch torch.module M.bad
EOS
	[ "$1" = now ] || echo "t1 mark python - caught"
	printf 't1 pop torch torch.module\nt1 pop torch torch.module\nt1 pop torch torch\n'
	[ "$1" = now ] && echo "t1 mark python - caught"
	cat <<EOS
t1 push torch torch forward
t1 push torch torch.module M
t1 push torch torch.module M.bad
t1 pop torch torch.module
t1 pop torch torch.module
t1 pop torch torch
t1 push torch torch forward
t1 push torch torch.module Named
t1 push torch torch.module Child
t1 pop torch torch.module
t1 pop torch torch.module
t1 pop torch torch
t1 push torch torch forward
t1 push torch torch.module Threaded
t2 push torch torch forward
t2 push torch torch.module Child
t2 pop torch torch.module
t2 pop torch torch
t1 pop torch torch.module
t1 pop torch torch
t1 push torch torch backward
t1 pop torch torch
EOS
}

run new
{ raised_then now; printf 't1 push torch torch optimizer\nt1 pop torch torch\nt1 end torch - id=1\n'; } >want.new
diff -u want.new new.ranges || fail "2.x: the range records"

run old TORCHDOUBLE_VERSION=1.13
{ raised_then later; echo "t1 end torch - id=1"; } >want.old
diff -u want.old old.ranges || fail "1.13: the range records"
exit 0
