# py-alloc.py MODE [HELPER] - a Python program that allocates GPU memory
# through ctypes, from named functions on known lines, for the Python-frame
# tests (tests/t50x-py-*.sh). Lines the tests look for carry a "# L:NAME"
# marker; the tests find their numbers with grep, so the file may change.
# MODE: basic | thread | deep | generator | async | all. HELPER is
# build/tests/clients/lib-pyhelper (needed by thread).
import asyncio
import ctypes
import sys

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]


def check(rc):
    if rc != 0:
        raise SystemExit("cuda error %d" % rc)


def alloc_basic(n):
    p = ctypes.c_void_p()
    check(rt.cudaMalloc(ctypes.byref(p), n))  # L:alloc_basic
    return p


def caller_basic():
    p = alloc_basic(1 << 20)  # L:caller_basic
    check(rt.cudaFree(p))  # L:free_basic


def recurse(depth, n):
    if depth > 0:
        return recurse(depth - 1, n)  # L:recurse
    p = ctypes.c_void_p()
    check(rt.cudaMalloc(ctypes.byref(p), n))  # L:alloc_deep
    check(rt.cudaFree(p))


def gen_allocs(n):
    for k in range(2):
        p = ctypes.c_void_p()
        check(rt.cudaMalloc(ctypes.byref(p), n + k))  # L:alloc_gen
        yield p


def consume_gen():
    for p in gen_allocs(3 << 20):  # L:consume_gen
        check(rt.cudaFree(p))


async def alloc_async(n):
    await asyncio.sleep(0)
    p = ctypes.c_void_p()
    check(rt.cudaMalloc(ctypes.byref(p), n))  # L:alloc_async
    return p


async def main_async():
    p = await alloc_async(5 << 20)  # L:main_async
    check(rt.cudaFree(p))


def native_thread(helper):
    lib = ctypes.CDLL(helper)
    lib.pyh_thread_alloc.argtypes = [ctypes.c_size_t]
    check(lib.pyh_thread_alloc(7 << 20))  # L:native_thread


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "basic"
    if mode in ("basic", "all"):
        caller_basic()  # L:main_basic
    if mode in ("deep", "all"):
        recurse(300, 2 << 20)
    if mode in ("generator", "all"):
        consume_gen()
    if mode in ("async", "all"):
        asyncio.run(main_async())
    if mode in ("thread", "all"):
        native_thread(sys.argv[2])
    print("done", mode)


if __name__ == "__main__":
    main()
