/*
 * rt-fork.c [exec] - fork while another thread allocates. The parent
 * allocates 1 MiB; a helper thread keeps allocating and freeing; the child
 * allocates 2 MiB and 3 MiB and frees them (or, with "exec", execs
 * rt-basic from the same directory). Both exit 0.
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

static volatile int stop;

static void *churn(void *arg)
{
	CK(cudaSetDevice(0));
	while (!stop) {
		void *p;
		CK(cudaMalloc(&p, 4096));
		CK(cudaFree(p));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	void *a, *b, *c;
	pthread_t t;
	int status;

	CK(cudaMalloc(&a, 1 << 20));
	pthread_create(&t, NULL, churn, NULL);
	usleep(10000);
	pid_t pid = fork();
	if (pid == 0) {
		if (argc > 1 && strcmp(argv[1], "exec") == 0) {
			char path[4096];
			ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
			path[n > 0 ? n : 0] = 0;
			strcpy(strrchr(path, '/') + 1, "rt-basic");
			execl(path, "rt-basic", (char *)NULL);
			_exit(127);
		}
		CK(cudaMalloc(&b, 2 << 20));
		CK(cudaMalloc(&c, 3 << 20));
		CK(cudaFree(b));
		CK(cudaFree(c));
		_exit(0);
	}
	waitpid(pid, &status, 0);
	stop = 1;
	pthread_join(t, NULL);
	CK(cudaFree(a));
	printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
