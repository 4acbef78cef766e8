/*
 * top-rate.c PROCS EVENTS_PER_S SECONDS - the load of the `memtrace top`
 * benchmark (bench/top-bench.sh): PROCS forked processes together make
 * EVENTS_PER_S events a second (cuMemAlloc_v2/cuMemFree_v2 pairs of 4 KiB,
 * paced every millisecond) for SECONDS, each keeping 64 allocations live so
 * the live set is not empty. Prints the events made and the seconds taken.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long worker(double pairs_per_s, double seconds)
{
	CUdeviceptr keep[64], p;
	CUcontext ctx;
	CUdevice dev;
	double t0 = now(), t;
	long done = 0;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx))
		exit(1);
	for (int i = 0; i < 64; i++)
		if (cuMemAlloc(&keep[i], 4096))
			exit(1);
	while ((t = now() - t0) < seconds) {
		long due = (long)(t * pairs_per_s);

		for (; done < due; done++) {
			if (cuMemAlloc(&p, 4096) || cuMemFree(p))
				exit(1);
		}
		usleep(1000);
	}
	return 2 * done + 64;
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 16;
	double rate = argc > 2 ? atof(argv[2]) : 1e6, seconds = argc > 3 ? atof(argv[3]) : 10;
	double t0 = now();
	int failed = 0;

	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			long n = worker(rate / 2 / procs, seconds);

			printf("%ld\n", n);
			exit(0);
		}
	}
	for (int i = 0; i < procs; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
	}
	fprintf(stderr, "top-rate: %d processes, %.1f s\n", procs, now() - t0);
	return failed;
}
