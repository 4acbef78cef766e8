/*
 * drv-stack-paths.c - one leaf reached from two call paths through the same
 * immediate caller, for the recorder's unwind cache (t118). path_a and
 * path_b have the same frame (no locals), so each allocation is made at the
 * same stack pointer with the same callers up to mid(); only the return
 * address into path_a or path_b differs. It allocates 8 times,
 * alternating a, b, a, b..., printing "a ADDR RET" or "b ADDR RET" per
 * allocation (RET: mid's return address, the frame that tells the paths
 * apart), then frees them. Then the process forks and the child allocates
 * once from the same call site, with the very stack of the parent's first
 * allocation: it prints "child a ADDR RET".
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

static volatile int which;
static void *volatile ret;

static __attribute__((noinline)) CUdeviceptr leaf(size_t n)
{
	CUdeviceptr p;
	CK(cuMemAlloc_v2(&p, n));
	return p;
}

static __attribute__((noinline)) CUdeviceptr mid(size_t n)
{
	CUdeviceptr p = leaf(n);
	ret = __builtin_return_address(0);
	return p;
}

/* Different bodies, so the compiler cannot fold them into one. */
static __attribute__((noinline)) CUdeviceptr path_a(size_t n)
{
	which = 1;
	CUdeviceptr p = mid(n);
	__asm__ volatile("" ::: "memory");   /* a call, not a jump */
	return p;
}

static __attribute__((noinline)) CUdeviceptr path_b(size_t n)
{
	which = 2;
	CUdeviceptr p = mid(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

static pid_t child = -1;

/* Round 0: 8 allocations; round 1 forks and the child makes 1, from the
   same call site (one indirect call, no copy of the loop for each round). */
static __attribute__((noinline)) void run(void)
{
	CUdeviceptr (*volatile fn)(size_t);
	CUdeviceptr p[8];

	for (volatile int r = 0; r < 2; r++) {
		int n = 8;
		if (r == 1) {
			fflush(stdout);
			if ((child = fork()) != 0)
				return;
			n = 1;
		}
		for (int i = 0; i < n; i++) {
			fn = i % 2 ? path_b : path_a;
			p[i] = fn(4096);
			printf("%s%c %#llx %p\n", r ? "child " : "", i % 2 ? 'b' : 'a', (unsigned long long)p[i], ret);
		}
		for (int i = 0; i < n; i++)
			CK(cuMemFree_v2(p[i]));
	}
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	int status;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	run();
	if (child == 0)
		return 0;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
