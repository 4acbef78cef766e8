/*
 * activations.c [--checkpoint] - the peak is set by the activations the
 * forward pass keeps for the backward pass; recomputing them (activation
 * checkpointing, torch.utils.checkpoint) lowers it.
 *
 * A model of 8 layers: weights 32 MiB, one 16 MiB activation per layer.
 * Without --checkpoint the forward pass keeps all 8 activations; the
 * backward pass walks back from layer 8, allocating a 16 MiB gradient and
 * freeing the layer's activation and the gradient at each layer.
 * With --checkpoint the layers form two segments of 4; the forward pass
 * keeps only each segment's output (layers 4 and 8) and frees every other
 * activation as soon as the next layer has used it; the backward pass
 * recomputes a segment's first 3 activations before walking back through
 * it. Every size is a multiple of 2 MiB, so the simulator charges exactly
 * what is asked.
 *
 * Expected (see samples/README.md):
 *                       peak                              cudaMalloc  cudaFree
 *   plain               176 MiB = 32 + 8 x 16 + 16        17          17
 *   --checkpoint        128 MiB = 32 + 2 x 16 + 3 x 16 + 16   23      23
 *   the drop: 48 MiB; device memory in use at the peak 476 / 428 MiB
 *   (300 MiB context); nothing live at exit.
 */
#include "sample.h"

#include <string.h>

#define LAYERS 8
#define SEGMENT 4
#define ACT (16 * MiB)

static SITE void *layer_forward(void)
{
	void *p;

	CK(cudaMalloc(&p, ACT));
	return p;
}

static SITE void *layer_recompute(void)
{
	void *p;

	CK(cudaMalloc(&p, ACT));
	return p;
}

/* One layer of the backward pass: its input gradient, used and dropped. */
static SITE void layer_backward(void **act)
{
	void *grad;

	CK(cudaMalloc(&grad, ACT));
	compute(2);
	CK(cudaFree(*act));
	*act = NULL;
	CK(cudaFree(grad));
}

int main(int argc, char **argv)
{
	void *act[LAYERS] = { 0 };
	void *weights;
	int checkpoint = argc > 1 && strcmp(argv[1], "--checkpoint") == 0;

	if (argc > 2 || (argc == 2 && !checkpoint)) {
		fprintf(stderr, "usage: activations [--checkpoint]\n");
		return 2;
	}
	CK(cudaSetDevice(0));
	CK(cudaMalloc(&weights, 32 * MiB));
	for (int i = 0; i < LAYERS; i++) {
		act[i] = layer_forward();
		compute(2);
		/* Checkpointing keeps a segment's output only: the previous
		 * activation goes once this layer has read it. */
		if (checkpoint && i % SEGMENT != 0) {
			CK(cudaFree(act[i - 1]));
			act[i - 1] = NULL;
		}
	}
	int kept = 0;
	for (int i = 0; i < LAYERS; i++)
		kept += act[i] != NULL;
	printf("activations: %s: the forward pass keeps %d MiB of activations for the backward pass\n",
	       checkpoint ? "with checkpointing" : "without checkpointing", kept * 16);
	for (int seg = LAYERS / SEGMENT - 1; seg >= 0; seg--) {
		int first = seg * SEGMENT, last = first + SEGMENT - 1;

		if (checkpoint)
			for (int i = first; i < last; i++)
				act[i] = layer_recompute();
		for (int i = last; i >= first; i--)
			layer_backward(&act[i]);
	}
	CK(cudaFree(weights));
	return 0;
}
