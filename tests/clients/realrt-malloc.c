/*
 * realrt-malloc - the real libcudart.so.13 over the simulated driver: one
 * cudaMalloc (which fails without a GPU; its error is printed) and the
 * driver version, to see how the real runtime reaches the driver.
 *
 * It also counts the runtime's dlsym calls into libcuda: the program
 * defines dlsym, which the runtime's reference binds to, prints
 * "dlsym libcuda <name>" for each call on libcuda's handle and forwards
 * every call to glibc's.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

void *dlsym(void *handle, const char *name)
{
	static void *(*real)(void *, const char *);
	if (!real) {
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!real)
			real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	}
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (cuda) {
		if (handle == cuda)
			printf("dlsym libcuda %s\n", name);
		dlclose(cuda);
	}
	return real(handle, name);
}

int main(void)
{
	void *p = NULL;
	cudaError_t err = cudaMalloc(&p, 1 << 20);
	printf("cudaMalloc: %d %s\n", err, cudaGetErrorName(err));
	int version = -1;
	err = cudaDriverGetVersion(&version);
	printf("cudaDriverGetVersion: %d %s, version %d\n", err, cudaGetErrorName(err), version);
	return 0;
}
