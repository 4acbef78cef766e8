/*
 * drv-stack-exact.c MODE... - call paths that fool an unwind cache, for the
 * stack exactness tests (t122). Each mode makes cuMemAlloc_v2/cuMemFree_v2
 * pairs from paths chosen so that a cache validating "same ip, same stack
 * pointer, same words in the return-address slots" would give one path's
 * stack to another; the test compares every recorded stack with a full
 * unwind (MEMTRACE_STACK_CHECK=1 in the same run, and a second run with
 * MEMTRACE_STACK_CACHE=0). Everything is deterministic (fixed seeds,
 * signals raised synchronously, threads one after another), so two runs
 * make the same stacks in the same order. Modes:
 *   alloca     callerA and callerB through one indirect call site into a
 *              leaf whose alloca puts mid() -> cuMemAlloc at the same stack
 *              pointer on both paths; callerB's frame is larger and leaves
 *              the old slot of leaf's return address untouched
 *   align      a leaf with an _Alignas(64) local (and rsp,-64), callerA and
 *              callerB differing by a 16-byte pad, at every stack pointer
 *              mod 64 (an alloca before the indirect call)
 *   tail       a path that reaches the leaf by a tail call, alternating
 *              with one that calls it
 *   longjmp    random depth, allocation at the bottom, longjmp to the top
 *   fiber      two swapcontext fibers on their own stacks and the main
 *              context, allocating at varying depths in turn
 *   signal     a handler that allocates, raised at random depths, on the
 *              thread's stack and on a sigaltstack
 *   recursion  two mutually recursive functions, random depth 1-64
 *   threads    threads one after another (each reusing the dead one's
 *              stack), each running two paths
 *   all        every mode in turn
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <cuda.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include "check.h"

#define KEEP() __asm__ volatile("" ::: "memory")

static unsigned seed = 12345;
static unsigned rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 16;
}

static __attribute__((noinline)) void pair(size_t n)
{
	CUdeviceptr p;
	CK(cuMemAlloc_v2(&p, n));
	CK(cuMemFree_v2(p));
	KEEP();
}

/* One indirect call site for every path. */
static __attribute__((noinline)) void dispatch(void (*fn)(size_t), size_t n)
{
	fn(n);
	KEEP();
}

/* --- alloca -------------------------------------------------------------- */

static uintptr_t target;    /* leaf's stack pointer after its alloca */

static __attribute__((noinline)) void alloca_mid(size_t n)
{
	pair(n);
	KEEP();
}

static __attribute__((noinline)) void alloca_leaf(size_t n)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (!target)
		target = here - 2048;
	size_t pad = here > target ? (here - target) & ~(uintptr_t)15 : 16;
	char *a = alloca(pad);
	__asm__ volatile("" : : "r"(a) : "memory");
	alloca_mid(n);
	KEEP();
}

static __attribute__((noinline)) void alloca_a(size_t n)
{
	volatile char some[256];    /* leaf's return address below it */
	__asm__ volatile("" : : "r"(some) : "memory");
	alloca_leaf(n);
	KEEP();
}

static __attribute__((noinline)) void alloca_b(size_t n)
{
	volatile char big[1024];    /* never written: stale words stay */
	__asm__ volatile("" : : "r"(big) : "memory");
	alloca_leaf(n);
	KEEP();
}

static void mode_alloca(void)
{
	for (int i = 0; i < 16; i++)
		dispatch(i % 2 ? alloca_b : alloca_a, i % 2 ? 40960 : 8192);
}

/* --- align --------------------------------------------------------------- */

static __attribute__((noinline)) void align_leaf(size_t n)
{
	_Alignas(64) char buf[64];
	__asm__ volatile("" : : "r"(buf) : "memory");
	pair(n);
	KEEP();
}

static __attribute__((noinline)) void align_a(size_t n)
{
	align_leaf(n);
	KEEP();
}

static __attribute__((noinline)) void align_b(size_t n)
{
	volatile char pad[16];
	__asm__ volatile("" : : "r"(pad) : "memory");
	align_leaf(n);
	KEEP();
}

static __attribute__((noinline)) void align_at(int k)
{
	char *a = alloca(16 * k + 1);
	__asm__ volatile("" : : "r"(a) : "memory");
	for (int i = 0; i < 6; i++)
		dispatch(i % 2 ? align_b : align_a, 4096 * (1 + i % 2));
}

static void mode_align(void)
{
	for (int k = 0; k < 8; k++)
		align_at(k);
}

/* --- tail ---------------------------------------------------------------- */

static __attribute__((noinline)) void tail_leaf(size_t n)
{
	pair(n);
	KEEP();
}

static __attribute__((noinline)) void tail_jump(size_t n)
{
	tail_leaf(n + 4096);        /* a jump at -O2 */
}

static __attribute__((noinline)) void tail_call(size_t n)
{
	tail_leaf(n);
	KEEP();
}

static void mode_tail(void)
{
	for (int i = 0; i < 12; i++)
		dispatch(i % 3 ? tail_jump : tail_call, 4096);
}

/* --- longjmp ------------------------------------------------------------- */

static jmp_buf jb;

static __attribute__((noinline)) void deep_b(int d);
static __attribute__((noinline)) void deep_a(int d)
{
	volatile int pad[4];
	pad[0] = d;
	if (d <= 0) {
		pair(4096);
		longjmp(jb, 1);
	}
	if (rnd() & 1)
		deep_a(d - 1);
	else
		deep_b(d - 1);
	KEEP();
	(void)pad[0];
}

static __attribute__((noinline)) void deep_b(int d)
{
	if (d <= 0) {
		pair(8192);
		longjmp(jb, 1);
	}
	if (rnd() & 1)
		deep_b(d - 1);
	else
		deep_a(d - 1);
	KEEP();
}

static void mode_longjmp(void)
{
	for (volatile int i = 0; i < 24; i++)
		if (!setjmp(jb))
			(i % 2 ? deep_a : deep_b)((int)(rnd() % 40));
}

/* --- fiber --------------------------------------------------------------- */

static ucontext_t main_uc, fib_uc[2];

static __attribute__((noinline)) void fib_down(int who, int d)
{
	if (d > 0) {
		fib_down(who, d - 1);
		KEEP();
		return;
	}
	pair(4096 * (size_t)(who + 1));
	swapcontext(&fib_uc[who], who ? &main_uc : &fib_uc[1]);
}

static void fib_main(int who)
{
	for (int i = 0; i < 8; i++)
		fib_down(who, (int)(rnd() % 12));
}

/* getcontext() returns twice: no variable that changes after it (a loop
   counter) may live across it, so each fiber is made in a call of its own */
static void fib_make(int who)
{
	static char stacks[2][256 << 10];

	getcontext(&fib_uc[who]);
	fib_uc[who].uc_stack.ss_sp = stacks[who];
	fib_uc[who].uc_stack.ss_size = sizeof stacks[who];
	fib_uc[who].uc_link = &main_uc;
	makecontext(&fib_uc[who], (void (*)(void))fib_main, 1, who);
}

static void mode_fiber(void)
{
	for (int i = 0; i < 2; i++)
		fib_make(i);
	for (int i = 0; i < 8; i++) {
		swapcontext(&main_uc, &fib_uc[0]);
		pair(3 * 4096);
	}
}

/* --- signal -------------------------------------------------------------- */

static void on_signal(int sig)
{
	pair(sig == SIGUSR1 ? 4096 : 8192);
}

static __attribute__((noinline)) void sig_down(int d, int sig)
{
	if (d > 0) {
		sig_down(d - 1, sig);
		KEEP();
		return;
	}
	pair(16384);
	raise(sig);
	pair(16384);
}

static void mode_signal(void)
{
	struct sigaction sa;
	static char alt[256 << 10];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof alt };

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < 12; i++)
		sig_down((int)(rnd() % 20), i % 2 ? SIGUSR2 : SIGUSR1);
}

/* --- recursion ----------------------------------------------------------- */

static __attribute__((noinline)) void rec_b(int d);
static __attribute__((noinline)) void rec_a(int d)
{
	if (d <= 0) {
		pair(4096);
		return;
	}
	if (rnd() & 1)
		rec_a(d - 1);
	else
		rec_b(d - 1);
	KEEP();
}

static __attribute__((noinline)) void rec_b(int d)
{
	volatile char pad[24];
	pad[0] = 0;
	if (d <= 0) {
		pair(8192);
		return;
	}
	if (rnd() & 1)
		rec_b(d - 1);
	else
		rec_a(d - 1);
	KEEP();
	(void)pad[0];
}

static void mode_recursion(void)
{
	for (int i = 0; i < 64; i++) {
		unsigned s = seed;
		int d = 1 + (int)(rnd() % 64);
		rec_a(d);
		seed = s;   /* the same path again, at once */
		rnd();
		rec_a(d);
	}
}

/* --- threads ------------------------------------------------------------- */

static CUcontext ctx;

static void *thread_main(void *arg)
{
	int k = (int)(intptr_t)arg;
	CK(cuCtxSetCurrent(ctx));
	for (int i = 0; i < 10; i++) {
		if ((i + k) % 2)
			alloca_a(4096);
		else
			align_b(8192);
	}
	return NULL;
}

static void mode_threads(void)
{
	for (int k = 0; k < 8; k++) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, (void *)(intptr_t)k) != 0 || pthread_join(t, NULL) != 0)
			exit(1);
	}
}

static const struct {
	const char *name;
	void (*run)(void);
} modes[] = {
	{ "alloca", mode_alloca }, { "align", mode_align }, { "tail", mode_tail },
	{ "longjmp", mode_longjmp }, { "fiber", mode_fiber }, { "signal", mode_signal },
	{ "recursion", mode_recursion }, { "threads", mode_threads },
};

int main(int argc, char **argv)
{
	CUdevice dev;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	for (int a = 1; a < argc; a++) {
		int found = 0;
		for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
			if (strcmp(argv[a], "all") == 0 || strcmp(argv[a], modes[m].name) == 0) {
				modes[m].run();
				found = 1;
			}
		if (!found) {
			fprintf(stderr, "drv-stack-exact: unknown mode %s\n", argv[a]);
			return 2;
		}
	}
	return 0;
}
