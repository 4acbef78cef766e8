/*
 * rt-dev-fail.c SET SIZE - the device of an allocation that fails, maybe
 * before the runtime has a context. SET is the device given to
 * cudaSetDevice first ("-": no call, the runtime's default device 0); then
 * one cudaMalloc of SIZE bytes, the program's first allocation. With
 * SIMCUDA_CTX_OVERHEAD larger than a device, the primary context cannot be
 * created: cudaSetDevice and cudaMalloc fail and no context is current, yet
 * the runtime counts the device chosen as the thread's device (cudaGetDevice
 * says so), and that is the device of the failed cudaMalloc. Prints the
 * three results and cudaGetDevice's answer.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

int main(int argc, char **argv)
{
	void *p;
	int dev = -1;
	cudaError_t set = cudaSuccess;

	if (argc != 3)
		return 2;
	if (strcmp(argv[1], "-") != 0)
		set = cudaSetDevice(atoi(argv[1]));
	cudaError_t r = cudaMalloc(&p, strtoull(argv[2], NULL, 0));
	cudaError_t get = cudaGetDevice(&dev);
	printf("set %d malloc %d get %d device %d\n", (int)set, (int)r, (int)get, dev);
	return 0;
}
