/*
 * rt-rotate.c MS [--own-sigbus] - allocates and frees in a loop on two
 * threads for MS milliseconds (with a short sleep every 64 pairs, so a test
 * has time to truncate the trace file under it), then prints one line and
 * exits 0: the loop is what a log rotation's copytruncate meets.
 *
 * --own-sigbus: the program's own SIGBUS handler, installed after the first
 * CUDA call (so after memtrace's), then at the end two faults that are the
 * program's: a page of its own file mapping past that file's end (the
 * handler jumps out with siglongjmp) and a kill(getpid(), SIGBUS) (the
 * handler counts it and returns). Prints what its handler saw: a recorder
 * that takes SIGBUS for its own trace must hand every other one on.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

static long ms;
static sigjmp_buf jump;
static volatile sig_atomic_t in_probe, faults, kills;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void *work(void *arg)
{
	long id = (long)arg, end = now_ms() + ms;

	CK(cudaSetDevice(0));
	for (long i = 0; now_ms() < end; i++) {
		void *p;
		CK(cudaMalloc(&p, (size_t)256 << ((i + id) % 13)));
		CK(cudaFree(p));
		if (i % 64 == 63)
			usleep(1000);
	}
	return NULL;
}

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	if (si->si_code == SI_USER) {
		kills++;
		return;
	}
	faults++;
	if (in_probe)
		siglongjmp(jump, 1);
	_exit(99);      /* a fault the program did not expect */
}

/* The program's own mapping past its file's end: its handler gets it. */
static void own_fault(void)
{
	char path[] = "/tmp/rt-rotate.XXXXXX";
	int fd = mkstemp(path);
	volatile char *p;

	if (fd < 0 || ftruncate(fd, 4096) < 0)
		exit(3);
	unlink(path);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		exit(3);
	if (sigsetjmp(jump, 1) == 0) {
		in_probe = 1;
		p[4096] = 1;            /* past the end of the file */
	}
	in_probe = 0;
	munmap((void *)p, 8192);
	close(fd);
}

int main(int argc, char **argv)
{
	int own = argc > 2 && !strcmp(argv[2], "--own-sigbus");
	int die = argc > 2 && !strcmp(argv[2], "--die");
	pthread_t t[2];
	void *p;

	ms = argc > 1 ? atol(argv[1]) : 1000;
	CK(cudaMalloc(&p, 4096));
	CK(cudaFree(p));
	if (own) {
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_bus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, NULL))
			return 4;
	}
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (die) {
		printf("faulting\n");
		fflush(stdout);
		own_fault();
		printf("survived a fault of its own\n");
		return 6;
	}
	if (own) {
		struct sigaction now;

		own_fault();
		kill(getpid(), SIGBUS);
		/* the handler the program asks about is its own */
		if (sigaction(SIGBUS, NULL, &now) || now.sa_sigaction != on_bus)
			return 5;
		printf("own handler: %d fault, %d kill\n", (int)faults, (int)kills);
	}
	printf("done after %ld ms\n", ms);
	return 0;
}
