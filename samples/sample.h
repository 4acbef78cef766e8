/*
 * sample.h - what every sample shares: sizes in MiB and CK(call), which ends
 * the program with a message naming the call and the error, and exit
 * status 1, when a CUDA runtime call fails that the sample did not expect
 * to fail. A sample never ignores an error silently.
 */
#ifndef MEMTRACE_SAMPLE_H
#define MEMTRACE_SAMPLE_H

/* For program_invocation_short_name: include this header first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MiB (1024ull * 1024)

/* An allocation site of its own: a function the compiler neither inlines
 * nor clones, so that a report names it as written. */
#if defined(__clang__)
#define SITE __attribute__((noinline))
#else
#define SITE __attribute__((noinline, noclone))
#endif

static inline void sample_die(const char *call, cudaError_t err, const char *file, int line)
{
	fprintf(stderr, "%s: %s:%d: %s failed: %s (%s)\n", program_invocation_short_name,
		file, line, call, cudaGetErrorName(err), cudaGetErrorString(err));
	exit(1);
}

#define CK(call) do { \
	cudaError_t ck_err_ = (call); \
	if (ck_err_ != cudaSuccess) \
		sample_die(#call, ck_err_, __FILE__, __LINE__); \
} while (0)

/* Ends the program with a message of the sample's own. */
#define DIE(...) do { \
	fprintf(stderr, "%s: ", program_invocation_short_name); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	exit(1); \
} while (0)

/* Stands for the kernels a step would run: spreads the events over time, as
 * in a real run, so that timelines read well and the report can tell a
 * site that grows through the run from one that grew once. */
static inline void compute(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline double mib(unsigned long long bytes)
{
	return (double)bytes / MiB;
}

#endif
