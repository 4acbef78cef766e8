/*
 * errors.c - cuGetErrorName / cuGetErrorString with the real driver's texts
 * for every code the simulated driver returns (and a few common others).
 * Both work before cuInit, as the real ones do.
 */
#include <stddef.h>

#include "sim.h"

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
#define E(code, text) { code, #code, text }
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
	E(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
	E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_ILLEGAL_STATE, "the operation cannot be performed in the present state"),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"),
	E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"),
	E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active"),
	E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
	E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"),
	E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"),
	E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"),
	E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "operation failed due to a previous error during capture"),
	E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "capture was not initiated in this stream"),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef E
};

static int find(CUresult code)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == code)
			return (int)i;
	return -1;
}

SIM_EXPORT CUresult cuGetErrorName(CUresult error, const char **str)
{
	int i = find(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].name;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

SIM_EXPORT CUresult cuGetErrorString(CUresult error, const char **str)
{
	int i = find(error);

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = i < 0 ? NULL : errors[i].text;
	return i < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
