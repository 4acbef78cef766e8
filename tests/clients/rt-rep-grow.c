/*
 * rt-rep-grow.c - a growing site and a steady one (tests/t211): every 2 ms,
 * keep() allocates 1 MiB that is never freed (10 times), and churn()
 * allocates and frees 3 MiB. keep() sets a new maximum 10 times over the
 * whole run and ends at its maximum: a growing leak of 10 MiB in 10
 * allocations; churn() sets its maximum once: not growing, nothing live.
 */
#include <cuda_runtime_api.h>
#include <unistd.h>
#include "check.h"

static void keep(void) { void *p; CK(cudaMalloc(&p, 1 << 20)); }
static void churn(void) { void *p; CK(cudaMalloc(&p, 3 << 20)); CK(cudaFree(p)); }

int main(void)
{
	for (int i = 0; i < 10; i++) {
		churn();
		keep();
		usleep(2000);
	}
	churn();
	return 0;
}
