/*
 * rt-rep-workers.c - 64 forked workers on one device, at most 7 alive at
 * once (tests/t222): each allocates 3 MiB, never frees it, and exits. They
 * run in batches of 7 (the last one alone): a batch's workers all hold
 * their 3 MiB together, then exit, and the next batch starts after the
 * parent has reaped them. So the device never holds more than 21 MiB,
 * while the workers leave 192 MiB at their exits, summed. The parent makes
 * no CUDA call.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define WORKERS 64
#define BATCH 7

int main(void)
{
	for (int started = 0; started < WORKERS;) {
		int ready[2], go[2], n = 0;
		char c;

		if (pipe(ready) || pipe(go))
			return 1;
		for (; n < BATCH && started < WORKERS; n++, started++) {
			pid_t pid = fork();
			void *p;

			if (pid < 0)
				return 1;
			if (pid == 0) {
				CK(cudaMalloc(&p, 3 << 20));
				if (write(ready[1], "x", 1) != 1 || read(go[0], &c, 1) != 1)
					_exit(1);
				exit(0);
			}
		}
		for (int i = 0; i < n; i++)
			if (read(ready[0], &c, 1) != 1)
				return 1;
		for (int i = 0; i < n; i++)
			if (write(go[1], "x", 1) != 1)
				return 1;
		for (int i = 0; i < n; i++) {
			int st;

			if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				return 1;
		}
		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
	}
	return 0;
}
