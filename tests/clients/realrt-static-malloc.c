/*
 * realrt-static.c - linked with the real static CUDA runtime
 * (libcudart_static.a), as nvcc links by default: the runtime's functions
 * are inside the executable, not interposable, so memtrace sees it only
 * through its dlopen of libcuda.so.1, its dlsym of cuGetProcAddress_v2 and
 * its look-ups. Over the simulated driver its allocations fail (the real
 * runtime cannot initialize there); the look-ups are what the test checks.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
	void *p = NULL;
	printf("cudaMalloc: %d\n", (int)cudaMalloc(&p, 1 << 20));
	return 0;
}
