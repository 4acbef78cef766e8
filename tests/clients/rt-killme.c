/*
 * rt-killme.c LOG - allocates and frees forever in 4 threads; after each
 * call returned it appends "alloc ADDR SIZE" / "free ADDR" to LOG with one
 * write(), so a test that SIGKILLs it knows which events must be in the
 * trace.
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int logfd;

static void *work(void *arg)
{
	long id = (long)arg;
	char line[128];
	CK(cudaSetDevice(0));
	for (unsigned long i = 0;; i++) {
		void *p;
		size_t size = (size_t)512 << ((i + id) % 9);
		CK(cudaMalloc(&p, size));
		int n = snprintf(line, sizeof line, "alloc %p %zu\n", p, size);
		(void)!write(logfd, line, (size_t)n);
		if (i % 3 != 0) {
			CK(cudaFree(p));
			n = snprintf(line, sizeof line, "free %p\n", p);
			(void)!write(logfd, line, (size_t)n);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	if (argc < 2)
		return 2;
	logfd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (logfd < 0)
		return 2;
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	pthread_join(t[0], NULL);
	return 0;
}
