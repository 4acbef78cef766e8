/*
 * rt-rob-forkstress.c FORKS - forks FORKS times, one after the other, while
 * 4 threads allocate and free 4 KiB blocks. Child i allocates (i % 7 + 1)
 * MiB and 8 KiB, frees the first and exits: through exit() when i is even
 * (destructors run), _exit() when odd. Every child has alarm(20), so a hung
 * child dies of SIGALRM instead of hanging the test. Prints "N forks,
 * N children ok" and exits 0 only if every child exited 0.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

static atomic_int stop;

static void *churn(void *arg)
{
	CK(cudaSetDevice(0));
	/* bounded, so the trace stays small when forks are slow */
	for (long i = 0; i < 50000 && !atomic_load(&stop); i++) {
		void *p;
		CK(cudaMalloc(&p, 4096));
		CK(cudaFree(p));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? atoi(argv[1]) : 20, ok = 0;
	pthread_t t[4];
	void *a;

	CK(cudaMalloc(&a, 1 << 20));
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (int i = 0; i < forks; i++) {
		int status;
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid == 0) {
			void *p, *q;
			alarm(20);
			CK(cudaMalloc(&p, (size_t)(i % 7 + 1) << 20));
			CK(cudaMalloc(&q, 8192));
			CK(cudaFree(p));
			if (i % 2)
				_exit(0);
			exit(0);
		}
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			ok++;
		else
			fprintf(stderr, "child %d: status %#x\n", i, status);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CK(cudaFree(a));
	printf("%d forks, %d children ok\n", forks, ok);
	return ok == forks ? 0 : 1;
}
