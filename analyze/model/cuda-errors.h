/*
 * cuda-errors.h - the names of CUDA's error codes: the driver's CUresult
 * (CUDA_ERROR_OUT_OF_MEMORY) and the runtime's cudaError_t
 * (cudaErrorMemoryAllocation). Both enums share most numbers but not their
 * names, so a code is only named together with the API that returned it:
 * an event's MT_KIND_RUNTIME flag says which (trace-format.h).
 *
 * The tables are cuda-errors-list.h, generated from the CUDA headers by
 * scripts/gen-cuda-errors.sh; nothing here needs the headers.
 */
#ifndef MEMTRACE_CUDA_ERRORS_H
#define MEMTRACE_CUDA_ERRORS_H

#include <stddef.h>

struct cuda_error {
	unsigned code;
	const char *name;           /* "cudaErrorMemoryAllocation" */
};

/* The name of code in the runtime's table (runtime != 0) or the driver's,
   or NULL when that table has no such code. */
const char *cuda_error_name(unsigned code, int runtime);

/* A whole table, by code: its n entries. */
const struct cuda_error *cuda_errors(int runtime, size_t *n);

#endif
