/*
 * rt-rep-peak.c - known sizes for the report's peak, leak and failure
 * numbers (tests/t210-report-peak.sh):
 *   a 10 MiB, b 20 MiB, free a, c 30 MiB  -> peak 50 MiB (b + c), set by c
 *   free b, free c; d 4 MiB never freed  -> live at exit 4 MiB
 *   1 MiB pinned host, freed              -> host peak 1 MiB
 *   a 1 PiB request fails                 -> reserved 4 MiB then, top holder d
 */
#include <cuda_runtime_api.h>
#include <unistd.h>
#include "check.h"

static void *site_a(void) { void *p; CK(cudaMalloc(&p, 10 << 20)); return p; }
static void *site_b(void) { void *p; CK(cudaMalloc(&p, 20 << 20)); return p; }
static void *site_c(void) { void *p; CK(cudaMalloc(&p, 30 << 20)); return p; }
static void *site_d(void) { void *p; CK(cudaMalloc(&p, 4 << 20)); return p; }

int main(void)
{
	void *a, *b, *c, *h, *huge;

	a = site_a();
	b = site_b();
	CK(cudaFree(a));
	c = site_c();
	usleep(1000);
	CK(cudaFree(b));
	CK(cudaFree(c));
	(void)site_d();
	CK(cudaMallocHost(&h, 1 << 20));
	CK(cudaFreeHost(h));
	EXPECT(cudaMalloc(&huge, (size_t)1 << 50), cudaErrorMemoryAllocation);
	(void)cudaGetLastError();
	return 0;
}
