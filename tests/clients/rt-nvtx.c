/*
 * rt-nvtx.c - a program that marks its units of time with NVTX v3 (the
 * toolkit's header-only nvtx3/, built with -I$CUDA_HOME/include) and
 * allocates through the (simulated) runtime; tests/t640-t642 run it.
 *
 *   rt-nvtx train     three steps, "step N" > "forward" / "backward", in
 *                     the default domain; "load" in domain "io" (a
 *                     registered string); a mark, a thread name. Per step
 *                     keep() allocates 10 MiB never freed; forward 20 MiB
 *                     freed after it; backward 5 MiB freed inside it:
 *                       step 1: 10, forward 30 (peak), backward 15
 *                       step 2: 20, forward 40, backward 25
 *                       step 3: 30, forward 50 (the run's peak), backward 35
 *                     so the run's peak is 50 MiB in 'forward' (step 3), and
 *                     reserved grows 10 MiB a step from keep().
 *   rt-nvtx train N K F   the same with N steps numbered from F, each
 *                     keeping K MiB (defaults 3 10 1): step F + i - 1
 *                     (i from 1) peaks at K i + 20 MiB, ends at K i
 *   rt-nvtx threads   two threads, each in a range of its own ("worker A"
 *                     holds 8 MiB, "worker B" 4 MiB, one after the other),
 *                     in domain "pool"
 *   rt-nvtx misuse    a pop with nothing open, a range started on the main
 *                     thread and ended on another, a range left open at exit
 *   rt-nvtx wide      RangePushW, MarkW, DomainCreateW
 *   rt-nvtx many N    N push/pop pairs (no allocation inside), timed on
 *                     stderr: "ns per pair"
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define MiB (1u << 20)

static void *keep(size_t mib) { void *p; CK(cudaMalloc(&p, mib * MiB)); return p; }

static void step(int n, size_t kept, nvtxDomainHandle_t io, nvtxStringHandle_t load)
{
	char name[32];
	void *f, *b;

	snprintf(name, sizeof name, "step %d", n);
	nvtxRangePushA(name);
	nvtxEventAttributes_t a = { 0 };
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = load;
	nvtxDomainRangePushEx(io, &a);
	keep(kept);
	nvtxDomainRangePop(io);
	nvtxRangePushA("forward");
	CK(cudaMalloc(&f, 20 * MiB));
	nvtxRangePop();
	CK(cudaFree(f));
	nvtxRangePushA("backward");
	CK(cudaMalloc(&b, 5 * MiB));
	CK(cudaFree(b));
	nvtxRangePop();
	nvtxRangePop();
}

static void train(int steps, size_t kept, int first)
{
	nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "trainer");
	nvtxDomainHandle_t io = nvtxDomainCreateA("io");
	nvtxStringHandle_t load = nvtxDomainRegisterStringA(io, "load");
	nvtxMarkA("epoch 1");
	for (int i = 0; i < steps; i++)
		step(first + i, kept, io, load);
}

static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	const char *name = arg;
	nvtxDomainHandle_t d = nvtxDomainCreateA("pool");
	nvtxEventAttributes_t a = { 0 };
	void *p;

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	pthread_mutex_lock(&turn);
	nvtxDomainRangePushEx(d, &a);
	CK(cudaMalloc(&p, (name[7] == 'A' ? 8 : 4) * MiB));
	CK(cudaFree(p));
	nvtxDomainRangePop(d);
	pthread_mutex_unlock(&turn);
	return NULL;
}

static void threads(void)
{
	pthread_t a, b;

	pthread_mutex_lock(&turn);
	pthread_create(&a, NULL, worker, "worker A");
	pthread_mutex_unlock(&turn);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, worker, "worker B");
	pthread_join(b, NULL);
}

static nvtxRangeId_t cross_id;

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(cross_id);
	return NULL;
}

static void misuse(void)
{
	pthread_t t;
	void *p;

	if (nvtxRangePop() >= 0)
		fprintf(stderr, "rt-nvtx: a pop with nothing open did not return < 0\n");
	cross_id = nvtxRangeStartA("handoff");
	CK(cudaMalloc(&p, 2 * MiB));
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);
	CK(cudaFree(p));
	nvtxRangePushA("left open");
	CK(cudaMalloc(&p, 3 * MiB));
}

static void wide(void)
{
	nvtxDomainHandle_t d = nvtxDomainCreateW(L"d\u00e9j\u00e0");
	nvtxEventAttributes_t a = { 0 };
	void *p;

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"\u03b1\u03b2";
	nvtxRangePushW(L"na\u00efve");
	nvtxMarkW(L"m\u00e4rk");
	nvtxDomainRangePushEx(d, &a);
	CK(cudaMalloc(&p, MiB));
	CK(cudaFree(p));
	nvtxDomainRangePop(d);
	nvtxRangePop();
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void many(long n)
{
	void *p;
	CK(cudaMalloc(&p, MiB));         /* a trace to write to */
	double t0 = now();
	for (long i = 0; i < n; i++) {
		nvtxRangePushA("tiny");
		nvtxRangePop();
	}
	double t1 = now();
	CK(cudaFree(p));
	fprintf(stderr, "rt-nvtx: %ld pairs, %.1f ns per pair\n", n, (t1 - t0) * 1e9 / (double)n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "train";

	if (!strcmp(mode, "train"))
		train(argc > 2 ? atoi(argv[2]) : 3, argc > 3 ? (size_t)atol(argv[3]) : 10,
		      argc > 4 ? atoi(argv[4]) : 1);
	else if (!strcmp(mode, "threads"))
		threads();
	else if (!strcmp(mode, "misuse"))
		misuse();
	else if (!strcmp(mode, "wide"))
		wide();
	else if (!strcmp(mode, "many"))
		many(argc > 2 ? atol(argv[2]) : 1000000);
	else
		return 2;
	return 0;
}
