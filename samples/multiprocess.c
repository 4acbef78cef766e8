/*
 * multiprocess.c [WORLD_SIZE] - a launcher that forks and execs one worker
 * per GPU, as torchrun does (or a DataLoader its workers): each worker is
 * its own process, with its own trace, on its own device.
 *
 * The launcher checks the device count, then starts WORLD_SIZE workers
 * (default 2), each with RANK, LOCAL_RANK and WORLD_SIZE in its
 * environment as torchrun sets them; it allocates nothing itself. Worker r
 * calls cudaSetDevice(r), allocates a model shard of (r + 1) x 32 MiB, runs
 * 3 steps that each allocate and free 16 MiB of activations, and frees the
 * shard. On the simulated GPU run it with SIMCUDA_DEVICES=2 (or more).
 *
 * Expected, world size 2 (see samples/README.md):
 *   one trace per worker, none for the launcher; rank and world size in
 *   each trace's process record
 *   rank 0, device 0: peak 48 MiB (32 + 16), 4 cudaMalloc, 4 cudaFree
 *   rank 1, device 1: peak 80 MiB (64 + 16), 4 cudaMalloc, 4 cudaFree
 *   device memory in use at the peaks 348 and 380 MiB (300 MiB context
 *   each); nothing live at exit
 */
#include "sample.h"

#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int env_int(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v)
		DIE("worker started without %s", name);
	return atoi(v);
}

static SITE int worker(void)
{
	int rank = env_int("RANK"), local_rank = env_int("LOCAL_RANK");
	void *shard, *act;

	CK(cudaSetDevice(local_rank));
	CK(cudaMalloc(&shard, (uint64_t)(rank + 1) * 32 * MiB));
	for (int step = 0; step < 3; step++) {
		CK(cudaMalloc(&act, 16 * MiB));
		CK(cudaFree(act));
	}
	CK(cudaFree(shard));
	printf("  worker rank %d (pid %d) on device %d: done\n", rank, (int)getpid(), local_rank);
	return 0;
}

int main(int argc, char **argv)
{
	int world = 2, devices = 0, failed = 0;
	char self[4096];
	ssize_t n;

	if (argc == 2 && strcmp(argv[1], "--worker") == 0)
		return worker();
	if (argc > 2 || (argc == 2 && (world = atoi(argv[1])) < 1)) {
		fprintf(stderr, "usage: multiprocess [WORLD_SIZE]\n");
		return 2;
	}
	CK(cudaGetDeviceCount(&devices));
	if (devices < world)
		DIE("%d workers need %d devices, found %d (on the simulated GPU set SIMCUDA_DEVICES=%d)",
		    world, world, devices, world);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		DIE("cannot read /proc/self/exe: %s", strerror(errno));
	self[n] = 0;

	printf("multiprocess: starting %d workers\n", world);
	fflush(stdout);
	for (int rank = 0; rank < world; rank++) {
		char r[16], w[16];
		pid_t pid = fork();

		if (pid < 0)
			DIE("fork: %s", strerror(errno));
		if (pid == 0) {
			snprintf(r, sizeof(r), "%d", rank);
			snprintf(w, sizeof(w), "%d", world);
			setenv("RANK", r, 1);
			setenv("LOCAL_RANK", r, 1);
			setenv("WORLD_SIZE", w, 1);
			execl(self, "multiprocess", "--worker", (char *)NULL);
			fprintf(stderr, "multiprocess: cannot run '%s': %s\n", self, strerror(errno));
			_exit(127);
		}
	}
	for (int i = 0; i < world; i++) {
		int status;

		if (wait(&status) < 0)
			DIE("wait: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	if (failed)
		DIE("%d of %d workers failed", failed, world);
	return 0;
}
