/*
 * rt-exit.c MODE [N] - a process that ends one way, after one allocation of
 * 1 MiB (freed) and one of 2 MiB (freed in an atexit handler for "exit",
 * so that a free comes after main). It prints one line first, so a test can
 * check its output is unchanged under memtrace.
 *   exit N      exit(N)
 *   return      return 0 from main
 *   _Exit N     _Exit(N)
 *   fork N      fork; the child allocates 4 MiB, frees it and calls _exit(N);
 *               the parent waits, prints the child's status, returns 0
 *   vfork N     vfork; the child calls _exit(N) at once (it shares the
 *               parent's memory, the recorder's included); the parent
 *               prints the child's status, frees, returns 0
 *   kill        raise(SIGKILL) with the 2 MiB still allocated
 */
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

static void *late;

static void free_late(void)
{
	CK(cudaFree(late));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "return";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	void *p;

	CK(cudaMalloc(&p, 1 << 20));
	CK(cudaFree(p));
	CK(cudaMalloc(&late, 2 << 20));
	printf("rt-exit %s %d\n", mode, n);
	fflush(stdout);
	if (!strcmp(mode, "exit")) {
		atexit(free_late);
		exit(n);
	}
	if (!strcmp(mode, "_Exit"))
		_Exit(n);
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	if (!strcmp(mode, "fork")) {
		int status;
		pid_t pid = fork();
		if (pid == 0) {
			CK(cudaMalloc(&p, 4 << 20));
			CK(cudaFree(p));
			_exit(n);
		}
		waitpid(pid, &status, 0);
		printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (!strcmp(mode, "vfork")) {
		int status;
		pid_t pid = vfork();
		if (pid == 0)
			_exit(n);
		waitpid(pid, &status, 0);
		printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	CK(cudaFree(late));
	return 0;
}
