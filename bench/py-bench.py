# bench/py-bench.py HELPER [PAIRS] [FRAMES] - the cost of Python frames in
# stacks: at a Python recursion FRAMES deep (default 30), one C call makes
# PAIRS cudaMalloc/cudaFree pairs (lib-pyhelper's pyh_loop), so Python runs
# no code per event and the time is the recorder's. Prints ns per event
# (alloc and free are one event each). Run it under `memtrace run` with
# MEMTRACE_PYTHON=1 and =0, on the simulated CUDA:
#   LD_LIBRARY_PATH=build/simcuda/driver:build/simcuda/runtime \
#   MEMTRACE_PYTHON=1 build/memtrace run -o /tmp/b.bin -- \
#       python3 bench/py-bench.py build/tests/clients/lib-pyhelper 200000 30
import ctypes
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
frames = int(sys.argv[3]) if len(sys.argv) > 3 else 30
lib.pyh_loop.argtypes = [ctypes.c_long, ctypes.c_size_t]


def at_depth(d):
    if d > 1:
        return at_depth(d - 1)
    lib.pyh_loop(1000, 256)  # warm up: stacks interned, code objects seen
    best = None
    for _ in range(5):
        t0 = time.perf_counter()
        lib.pyh_loop(pairs, 256)
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    return best


t = at_depth(frames)
print("%d python frames: %.1f ns per event" % (frames, t / (2 * pairs) * 1e9))
