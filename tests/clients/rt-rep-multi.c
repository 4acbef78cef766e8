/*
 * rt-rep-multi.c - two processes on one device at once (tests/t214): the
 * parent holds 10 MiB while the child allocates 20 MiB, so the device's
 * peak over both is 30 MiB; then the child frees and exits, then the
 * parent frees. Each process's own peak: 10 MiB and 20 MiB.
 */
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

int main(void)
{
	int go[2], done[2];
	void *p;
	char c;
	pid_t pid;

	if (pipe(go) || pipe(done))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			return 1;
		CK(cudaMalloc(&p, 20 << 20));
		usleep(2000);
		CK(cudaFree(p));
		return write(done[1], "x", 1) != 1;
	}
	CK(cudaMalloc(&p, 10 << 20));
	usleep(1000);
	if (write(go[1], "x", 1) != 1 || read(done[0], &c, 1) != 1)
		return 1;
	usleep(1000);
	CK(cudaFree(p));
	waitpid(pid, NULL, 0);
	return 0;
}
