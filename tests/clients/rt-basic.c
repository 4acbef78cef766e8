/*
 * rt-basic.c - the shared-runtime path: cudaMalloc / cudaFree of known
 * sizes, cudaFree(NULL), a double free, an impossible allocation. Prints
 * every pointer and result so runs with and without memtrace can be compared.
 * Expected: 3 device allocations (1 MiB, 3000 B, 64 MiB), 3 frees, one failed
 * free (double free, error 1), one failed allocation (OOM, error 2).
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include "check.h"

int main(void)
{
	void *a, *b, *c, *huge = NULL;

	CK(cudaFree(NULL));
	CK(cudaMalloc(&a, 1 << 20));
	CK(cudaMalloc(&b, 3000));
	CK(cudaMalloc(&c, 64 << 20));
	printf("a=%p b=%p c=%p\n", a, b, c);
	CK(cudaFree(b));
	EXPECT(cudaFree(b), cudaErrorInvalidValue);
	printf("oom=%d\n", (int)cudaMalloc(&huge, (size_t)1 << 50));
	(void)cudaGetLastError();
	CK(cudaFree(a));
	CK(cudaFree(c));
	printf("done\n");
	return 0;
}
