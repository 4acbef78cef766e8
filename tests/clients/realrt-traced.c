/*
 * realrt-traced.c - the real libcudart.so.13 over the simulated driver,
 * under memtrace: the runtime's cudaMalloc and cudaMallocAsync (which fail
 * without a GPU: the real runtime cannot initialize on the simulator) make
 * it look up its driver functions through cuGetProcAddress_v2, which is
 * what the test checks. Prints the two results.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
	void *p = NULL;
	printf("cudaMalloc: %d\n", (int)cudaMalloc(&p, 1 << 20));
	printf("cudaMallocAsync: %d\n", (int)cudaMallocAsync(&p, 1 << 20, 0));
	return 0;
}
