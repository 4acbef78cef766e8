/*
 * cuda-errors.c - names of CUresult and cudaError_t codes, from the tables
 * generated into cuda-errors-list.h (sorted by code: a binary search).
 */
#include "model/cuda-errors.h"
#include "model/cuda-errors-list.h"

#define ENTRY(code, name) { code, #name },
static const struct cuda_error driver_errors[] = { CUDA_DRIVER_ERRORS(ENTRY) };
static const struct cuda_error runtime_errors[] = { CUDA_RUNTIME_ERRORS(ENTRY) };
#undef ENTRY

const struct cuda_error *cuda_errors(int runtime, size_t *n)
{
	*n = runtime ? sizeof(runtime_errors) / sizeof(runtime_errors[0])
		     : sizeof(driver_errors) / sizeof(driver_errors[0]);
	return runtime ? runtime_errors : driver_errors;
}

const char *cuda_error_name(unsigned code, int runtime)
{
	size_t lo = 0, hi;
	const struct cuda_error *t = cuda_errors(runtime, &hi);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].code == code)
			return t[mid].name;
		if (t[mid].code < code)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
