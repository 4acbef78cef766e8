# py-steps-live.py READY GO - rt-nvtx.c's train (three steps; each keeps
# 10 MiB more, holds 20 MiB in "forward" and 5 MiB in "backward") through
# memtrace's Python markers and ctypes cudaMalloc, stopping where
# tests/t815-top-steps.sh looks at it live: it writes a phase number to
# the fifo READY and waits for a byte on the fifo GO.
#   phase 1: in step 2's "forward", holding 20 MiB over the 20 MiB kept
#            (40 MiB); step 1 is over: its peak 30 MiB, at its end 10 MiB
#   phase 2: between steps 2 and 3 (the 20 MiB kept); step 2 is over: its
#            peak 40 MiB, at its end 20 MiB
#   then step 3 (peak 50 MiB, at its end 30 MiB) and the end.
# py-steps-live.py READY GO fork: the same in a child process, forked after
# the parent's own "step 1" (holding nothing) and half a second, so that a
# watcher has seen the parent's ranges before the child's trace appears.
import ctypes
import os
import sys
import time
import memtrace

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20
ready, go = open(sys.argv[1], "w"), open(sys.argv[2], "rb")


def alloc(n):
    p = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(p), n * MiB) != 0:
        raise SystemExit("cudaMalloc failed")
    return p


def free(p):
    if rt.cudaFree(p) != 0:
        raise SystemExit("cudaFree failed")


def stop(phase):
    ready.write("%d\n" % phase)
    ready.flush()
    go.read(1)


if sys.argv[3:] == ["fork"]:
    with memtrace.step(1):
        pass
    time.sleep(0.5)
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
kept = []
for n in (1, 2, 3):
    with memtrace.step(n):
        with memtrace.phase("load", domain="io"):
            kept.append(alloc(10))
        with memtrace.phase("forward"):
            f = alloc(20)
            if n == 2:
                stop(1)
        free(f)
        with memtrace.phase("backward"):
            free(alloc(5))
    if n == 2:
        stop(2)
