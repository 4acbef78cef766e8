/*
 * rt-leak-fixed.c - samples/leak.c with its leak fixed, as a developer
 * would fix it in that file: the history of loss records is freed at the
 * end. The #line below keeps the file name of the frames samples/leak.c;
 * free_history() shifts main's lines, so `memtrace diff` against the
 * sample matches main's sites on function and file only ("fuzzy").
 * Expected: the figures of the sample (peak 112 MiB) but nothing left at
 * exit: the 20 MiB of keep_loss() are freed (10 more cudaFree).
 */
#include "../../samples/sample.h"

#line 22 "samples/leak.c"
#line 22 "samples/leak.c"

#define STEPS 10

static SITE void *alloc_weights(void)
{
	void *p;

	CK(cudaMalloc(&p, 32 * MiB));
	return p;
}

static SITE void *load_batch(void)
{
	void *p;

	CK(cudaMalloc(&p, 4 * MiB));
	return p;
}

static SITE void *forward(void)
{
	void *p;

	CK(cudaMalloc(&p, 24 * MiB));
	return p;
}

/* The leak: the history keeps every step's loss record. */
static SITE void *keep_loss(void)
{
	void *p;

	CK(cudaMalloc(&p, 2 * MiB));
	return p;
}

static SITE void *backward(void)
{
	void *p;

	CK(cudaMalloc(&p, 32 * MiB));
	return p;
}

/* The fix: the loss records are released once nobody needs them. */
static SITE void free_history(void **history, int n)
{
	for (int i = 0; i < n; i++)
		CK(cudaFree(history[i]));
}

int main(void)
{
	void *history[STEPS];
	void *weights, *batch, *act, *grads;

	CK(cudaSetDevice(0));
	weights = alloc_weights();
	for (int step = 0; step < STEPS; step++) {
		batch = load_batch();
		act = forward();
		history[step] = keep_loss();
		grads = backward();
		compute(5);
		CK(cudaFree(act));
		CK(cudaFree(batch));
		CK(cudaFree(grads));
	}
	CK(cudaFree(weights));
	free_history(history, STEPS);
	printf("leak: %d steps done; the loss history of %.0f MiB is freed\n",
	       STEPS, mib(STEPS * 2 * MiB));
	(void)history;
	return 0;
}
