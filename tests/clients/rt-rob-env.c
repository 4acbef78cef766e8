/*
 * rt-rob-env.c MODE [ARG] - programs that pull the environment or the
 * descriptors from under the tracer:
 *   clearenv       clearenv(), then two cudaMalloc/cudaFree pairs (256 KiB,
 *                  512 KiB); prints "cleared"
 *   clearenv-exec  a 1 MiB cudaMalloc/cudaFree pair, clearenv() keeping only
 *                  LD_LIBRARY_PATH, then exec of rt-basic (same directory):
 *                  the new image has no LD_PRELOAD
 *   unset-preload  a 1 MiB cudaMalloc, unsetenv("LD_PRELOAD"), fork + exec
 *                  of rt-basic, wait, cudaFree; prints "child status N"
 *   closeall FILE  a 2 MiB pair, then closes every descriptor, 0..2
 *                  included, opens FILE on 0, 1 and 2 (as daemons do), makes
 *                  ARG=1000 pairs of 4 KiB and writes "N pairs" to FILE
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

/* rt-basic beside this executable */
static void basic_path(char *path, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 16);
	path[n > 0 ? n : 0] = 0;
	strcpy(strrchr(path, '/') + 1, "rt-basic");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char path[4096];
	void *p;

	if (!strcmp(mode, "clearenv")) {
		clearenv();
		CK(cudaMalloc(&p, 256 << 10));
		CK(cudaFree(p));
		CK(cudaMalloc(&p, 512 << 10));
		CK(cudaFree(p));
		printf("cleared\n");
		return 0;
	}
	if (!strcmp(mode, "clearenv-exec")) {
		char *lib = getenv("LD_LIBRARY_PATH");
		lib = lib ? strdup(lib) : NULL;
		CK(cudaMalloc(&p, 1 << 20));
		CK(cudaFree(p));
		basic_path(path, sizeof path);
		clearenv();
		if (lib)
			setenv("LD_LIBRARY_PATH", lib, 1);
		fflush(stdout);
		execl(path, "rt-basic", (char *)NULL);
		return 127;
	}
	if (!strcmp(mode, "unset-preload")) {
		int status;
		CK(cudaMalloc(&p, 1 << 20));
		unsetenv("LD_PRELOAD");
		basic_path(path, sizeof path);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			execl(path, "rt-basic", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		CK(cudaFree(p));
		printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 0;
	}
	if (!strcmp(mode, "closeall") && argc > 2) {
		long n = argc > 3 ? atol(argv[3]) : 1000, i;
		char line[64];
		CK(cudaMalloc(&p, 2 << 20));
		CK(cudaFree(p));
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
		for (int k = 0; k < 3; k++)
			if (open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600) != k)
				return 3;
		for (i = 0; i < n; i++) {
			if (cudaMalloc(&p, 4096) || cudaFree(p))
				break;
		}
		int len = snprintf(line, sizeof line, "%ld pairs\n", i);
		return write(1, line, (size_t)len) == len ? 0 : 4;
	}
	fprintf(stderr, "usage: rt-rob-env clearenv|clearenv-exec|unset-preload|closeall FILE [N]\n");
	return 2;
}
