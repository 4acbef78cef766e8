#!/bin/sh
# t731-torch-old-note: a CUDA build of torch without the history API
# memtrace reads (before 2.1) gets one torch=off note naming its version,
# written when the program first initializes CUDA, never before: a program
# that imports torch and does not use CUDA gets no note (and so no trace).
# On a stand-in torch of a few lines, 1.13's API: the bool
# _record_memory_history(enabled, device) and a queue of lazy-init calls.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
cd "$T" || exit 1
mkdir -p fake/torch/cuda
cat >fake/torch/__init__.py <<'PY'
__version__ = "1.13.1+cu117"
from . import version, _C, cuda  # noqa: E402,F401
PY
echo 'cuda = "11.7"' >fake/torch/version.py
printf 'def _cuda_getDeviceCount():\n    return 1\n' >fake/torch/_C.py
cat >fake/torch/cuda/__init__.py <<'PY'
from . import memory  # noqa: F401
_queued_calls = []
_initialized = False


def _lazy_call(fn):
    _queued_calls.append((fn, None))


def is_initialized():
    return _initialized


def init():
    global _initialized
    for fn, _ in _queued_calls:
        fn()
    _initialized = True
PY
cat >fake/torch/cuda/memory.py <<'PY'
def _record_memory_history(enabled, device=None):
    raise AssertionError("memtrace called 1.13's _record_memory_history")


def _snapshot(device=None):
    return {"segments": []}
PY
printf 'import torch\nprint("queued", len(torch.cuda._queued_calls))\ntorch.cuda.init()\nprint("ok")\n' >init.py
printf 'import torch\nprint("initialized", torch.cuda.is_initialized())\n' >noinit.py

PYTHONPATH=$T/fake "$MEMTRACE" run --no-summary -o init.bin -- python3 init.py >out 2>err || fail "init.py: $(cat err)"
expect_eq "$(cat out | tr '\n' ' ')" "queued 1 ok " "init.py's output"
reason="torch 1.13.1+cu117: its _record_memory_history has no allocation history in the form memtrace reads (enabled=\"all\", trace entries in _snapshot(): torch 2.1 and later); tensors are seen at the CUDA level"
"$MEMTRACE" report --no-db init.bin >text || fail "report"
grep -qxF "note: pid $(sed -n 's/.*(pid \([0-9]*\),.*/\1/p' err): PyTorch's tensors were not recorded: $reason" text ||
	fail "the note: $(grep note text)"

PYTHONPATH=$T/fake "$MEMTRACE" run --no-summary -o noinit.bin -- python3 noinit.py >out 2>err || fail "noinit.py: $(cat err)"
expect_eq "$(cat out)" "initialized False" "noinit.py's output"
[ -f noinit.bin ] && fail "a trace for a program that never used CUDA: $("$MEMTRACE" dump noinit.bin | grep fw_)"
exit 0
