/*
 * rt-top-phases.c - a job that waits between phases, for `memtrace top`
 * (tests/t800): after each phase it writes one line to the fifo READY and
 * waits for one byte on the fifo GO, so the test looks at the traces at
 * exactly these moments.
 *
 *   phase 1: 16 MiB device (cudaMalloc), 4 MiB pinned host
 *            (cudaMallocHost), a 1 MiB /dev/shm segment NAME (kept)
 *   phase 2: two forked workers: the first allocates 8 MiB, the second
 *            8 MiB + 2 MiB; then the parent fails one allocation of 1 TiB
 *            and allocates 1 MiB more
 *   phase 3: the parent kills the second worker (SIGKILL), frees its 16 MiB
 *            and allocates 3 MiB
 *   then:    the first worker exits, the parent frees everything, unlinks
 *            the segment and exits.
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define MiB (1u << 20)

static FILE *ready;
static int go = -1;

static void phase(int n)
{
	char c;

	fprintf(ready, "%d\n", n);
	fflush(ready);
	if (read(go, &c, 1) != 1)
		exit(1);
}

/* A worker: allocates, says so, waits for a byte on in, exits. */
static pid_t worker(int extra, int done_fd, int *in_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		exit(1);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (pid == 0) {
		void *a, *b;
		char c;

		close(p[1]);
		CK(cudaMalloc(&a, 8 * MiB));
		if (extra)
			CK(cudaMalloc(&b, (size_t)extra * MiB));
		if (write(done_fd, "w", 1) != 1 || read(p[0], &c, 1) != 1)
			_exit(1);
		exit(0);
	}
	close(p[0]);
	*in_fd = p[1];
	return pid;
}

int main(int argc, char **argv)
{
	void *d16, *h4, *d1, *d3, *big;
	int w1_in, w2_in, done[2], shm, st;
	pid_t w1, w2;
	char c;

	if (argc != 4)
		return 2;
	ready = fopen(argv[1], "w");
	go = open(argv[2], O_RDONLY);
	if (!ready || go < 0 || pipe(done))
		return 1;

	CK(cudaMalloc(&d16, 16 * MiB));
	CK(cudaMallocHost(&h4, 4 * MiB));
	shm = shm_open(argv[3], O_CREAT | O_RDWR, 0600);
	if (shm < 0 || ftruncate(shm, MiB))
		return 1;
	phase(1);

	w1 = worker(0, done[1], &w1_in);
	w2 = worker(2, done[1], &w2_in);
	if (read(done[0], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		return 1;
	EXPECT(cudaMalloc(&big, (size_t)1 << 40), cudaErrorMemoryAllocation);
	CK(cudaMalloc(&d1, MiB));
	phase(2);

	kill(w2, SIGKILL);
	if (waitpid(w2, &st, 0) != w2)
		return 1;
	CK(cudaFree(d16));
	CK(cudaMalloc(&d3, 3 * MiB));
	phase(3);

	if (write(w1_in, "x", 1) != 1 || waitpid(w1, &st, 0) != w1 || !WIFEXITED(st))
		return 1;
	CK(cudaFree(d1));
	CK(cudaFree(d3));
	CK(cudaFreeHost(h4));
	close(shm);
	shm_unlink(argv[3]);
	close(w2_in);
	return 0;
}
