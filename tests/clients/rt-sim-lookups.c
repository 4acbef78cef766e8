/*
 * rt-sim-lookups - how the simulated runtime reaches the driver: it counts
 * the runtime's dlsym calls into libcuda (the program defines dlsym, which
 * the runtime's reference binds to, prints "dlsym libcuda <name>" for each
 * call on libcuda's handle and forwards every call to glibc's), then makes
 * the runtime load the driver with cudaFree(NULL) and asks for cuMemCreate
 * through cudaGetDriverEntryPoint, whose look-up must reach the driver's
 * cuGetProcAddress too.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

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
	cudaError_t err = cudaFree(NULL);
	printf("cudaFree(NULL): %d\n", err);
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
	err = cudaGetDriverEntryPoint("cuMemCreate", &fn, cudaEnableDefault, &found);
	printf("cudaGetDriverEntryPoint(cuMemCreate): %d, found %d, %s\n", err, found, fn ? "pointer" : "NULL");
	return err != cudaSuccess;
}
