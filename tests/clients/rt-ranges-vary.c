/*
 * rt-ranges-vary.c - ranges whose instances differ, for tests/t292 (a
 * check over a range scope reads every instance, not only the highest):
 * three instances of "work" (the first holds 64 MiB and frees it, the
 * second keeps 2 MiB, the third keeps 6 MiB and holds 4 more inside), then
 * "layer 1" (keeps 10 MiB) and "layer 2" (holds 200 MiB, keeps nothing):
 * two names of one range, "layer N". Sizes are multiples of CUDA's 2 MiB
 * granularity, so reserved is exactly what the program asked.
 */
#include <cuda_runtime_api.h>
#include "check.h"
#include "memtrace/markers.h"

#define MiB (1u << 20)

static void *hold(size_t n)
{
	void *p;

	CK(cudaMalloc(&p, n));
	return p;
}

int main(void)
{
	memtrace_push(NULL, "work");
	CK(cudaFree(hold(64 * MiB)));
	memtrace_pop(NULL);
	memtrace_push(NULL, "work");
	hold(2 * MiB);
	memtrace_pop(NULL);
	memtrace_push(NULL, "work");
	hold(6 * MiB);
	CK(cudaFree(hold(4 * MiB)));
	memtrace_pop(NULL);
	memtrace_push(NULL, "layer 1");
	hold(10 * MiB);
	memtrace_pop(NULL);
	memtrace_push(NULL, "layer 2");
	CK(cudaFree(hold(200 * MiB)));
	memtrace_pop(NULL);
	return 0;
}
