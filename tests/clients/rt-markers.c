/*
 * rt-markers.c - memtrace's C marker API (include/memtrace/markers.h) over
 * the (simulated) runtime, for tests/t642: phases "load" and "eval" in
 * domain "app", two steps "step 1", "step 2" (each keeps 4 MiB more and
 * holds 8 MiB inside), a mark, a start/end pair. Without memtrace every
 * call is a no-op: push and pop answer -1, start 0; the program prints
 * what they answered so the test can tell.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include "check.h"
#include "memtrace/markers.h"

#define MiB (1u << 20)

int main(void)
{
	void *p, *q;
	int d0 = memtrace_push("app", "load");

	CK(cudaMalloc(&p, 2 * MiB));
	memtrace_pop("app");
	for (int i = 1; i <= 2; i++) {
		char name[16];
		snprintf(name, sizeof name, "step %d", i);
		memtrace_push(NULL, name);
		CK(cudaMalloc(&p, 4 * MiB));
		CK(cudaMalloc(&q, 8 * MiB));
		CK(cudaFree(q));
		memtrace_pop(NULL);
	}
	memtrace_mark(NULL, "done training");
	uint64_t id = memtrace_start("app", "eval");
	CK(cudaMalloc(&q, MiB));
	CK(cudaFree(q));
	memtrace_end(id);
	int extra = memtrace_pop(NULL);
	printf("push %d start %s pop-with-none %d\n", d0, id ? "id" : "0", extra);
	return 0;
}
