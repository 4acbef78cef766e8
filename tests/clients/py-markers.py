# py-markers.py - memtrace's Python marker API (python/memtrace.py) around
# cudaMalloc calls through ctypes, with figures worked out by hand for
# tests/t643-markers-python.sh. Reserved (MiB) as the program goes:
#   weights 4 (outside every range)
#   load: 4 -> 6 (keeps 2)                              peak 6
#   step 1: 6, keeps 1 -> 7; forward 7 -> 15 -> 7; backward 7 -> 10 -> 7
#           peak 15, at its end 7
#   step 2: 7, keeps 1 -> 8; forward peak 16; backward peak 11; end 8
#   mark "epoch 1"
#   app:eval: 8 -> 13 -> 8                              peak 13
#   save (a decorated function): 8 -> 9 -> 8            peak 9
#   io:prefetch (start/end): 8 -> 10, ended; then freed  peak 10
# It prints what the API answered: without memtrace every call is a no-op
# (push -1, start 0) and the program runs the same.
import ctypes
import memtrace

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20


def alloc(n):
    p = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(p), n * MiB) != 0:  # L:alloc
        raise SystemExit("cudaMalloc failed")
    return p


def free(p):
    if rt.cudaFree(p) != 0:
        raise SystemExit("cudaFree failed")


@memtrace.phase("save")
def save():
    free(alloc(1))


kept = [alloc(4)]
with memtrace.phase("load"):
    kept.append(alloc(2))
for _ in range(2):
    with memtrace.step():
        kept.append(alloc(1))  # L:keep
        with memtrace.phase("forward"):
            free(alloc(8))
        with memtrace.phase("backward"):
            free(alloc(3))
memtrace.mark("epoch 1")
with memtrace.phase("eval", domain="app"):
    free(alloc(5))
save()
rid = memtrace.start("prefetch", domain="io")
buf = alloc(2)
memtrace.end(rid)
free(buf)
depth = memtrace.push("outer")
inner = memtrace.push("inner")
memtrace.pop()
memtrace.pop()
none = memtrace.pop()
print("active", memtrace.active(), "push", depth, inner, "pop-with-none", none,
      "start", "id" if rid else rid)
for p in kept:
    free(p)
