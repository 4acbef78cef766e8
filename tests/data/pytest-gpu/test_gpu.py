# A pytest suite for tests/t644-pytest-plugin.sh: ctypes cudaMalloc on the
# simulated CUDA, figures by hand (MiB; the process's reserved, kept holds
# the leaks; each test's range is its call, not its fixtures'):
#   test_clean         0 held, 8 and freed          peak 8,  leaked 0
#   test_leaks         0 held, keeps 3              peak 3,  leaked 3
#   test_over_peak     3 held, 16 freed             peak 19 > 10: fails (M)
#   test_within        3 held, 20 freed             peak 23 <= 32, leaked 0: passes
#   test_over_leaks    3 held, keeps 2              peak 5,  leaked 2 > 1: fails (M)
#   test_fails_itself  5 held, 1 freed, asserts     peak 6,  leaked 0: fails itself
#   test_fixture       5 + the fixture's 4, 1 freed peak 10, leaked 0
import ctypes
import pytest

rt = ctypes.CDLL("libcudart.so.13")
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaFree.argtypes = [ctypes.c_void_p]
MiB = 1 << 20
kept = []


def alloc(n):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), n * MiB) == 0
    return p


def free(p):
    assert rt.cudaFree(p) == 0


@pytest.fixture
def scratch():
    p = alloc(4)
    yield p
    free(p)


def test_clean():
    free(alloc(8))


def test_leaks():
    kept.append(alloc(3))


@pytest.mark.gpu_memory(peak="10 MiB")
def test_over_peak():
    free(alloc(16))


@pytest.mark.gpu_memory(peak="32 MiB", leaks=0)
def test_within():
    free(alloc(20))


@pytest.mark.gpu_memory(leaks="1 MiB")
def test_over_leaks():
    kept.append(alloc(2))


def test_fails_itself():
    free(alloc(1))
    assert False, "a failure of its own"


def test_fixture(scratch):
    free(alloc(1))
