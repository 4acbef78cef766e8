/*
 * leak.c - a leak inside a training loop: one allocation site leaks, the
 * others free what they allocate.
 *
 * The weights (32 MiB) live for the whole run. Each of the 10 steps
 * allocates an input batch (4 MiB), activations (24 MiB), gradients
 * (32 MiB) and a 2 MiB loss record, "computes" for 5 ms, and frees the
 * batch, the activations and the gradients, but keeps the loss record in
 * a history nobody frees: the C twin of `losses.append(loss)` in PyTorch,
 * which keeps every step's loss tensor (and its graph) alive. The weights
 * are freed at the end.
 *
 * Expected (every size is a multiple of 2 MiB, so the simulator charges
 * exactly what is asked; see samples/README.md):
 *   cudaMalloc 41 (1 + 10 x 4), cudaFree 31 (1 + 10 x 3), none failing
 *   peak 112 MiB, in step 10 when its gradients are allocated:
 *     32 weights + 4 batch + 24 activations + 32 gradients + 10 x 2 losses
 *   live at exit 20 MiB: 10 blocks of 2 MiB, all from keep_loss()
 *   device memory in use at the peak 412 MiB (300 MiB context + 112 MiB)
 */
#include "sample.h"

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
	printf("leak: %d steps done; the loss history holds %.0f MiB that is never freed\n",
	       STEPS, mib(STEPS * 2 * MiB));
	(void)history;
	return 0;
}
