/*
 * ipc.c - legacy CUDA IPC: cuIpcGetMemHandle / cuIpcOpenMemHandle(_v2) /
 * cuIpcCloseMemHandle.
 *
 * The 64-byte handle carries the exporting allocation: a magic, its
 * address, size, device, a per-export token and the exporter's pid. Opening
 * maps it at a new address in a range of its own, [0x680000000000, +4 TiB),
 * and charges nothing: the memory belongs to the exporting process (call
 * log kind=foreign). Opening works in any process, the exporting one
 * included, since tests have no second GPU process to hand the handle to.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

struct blob {
	char magic[8];
	uint64_t addr, size, token;
	int32_t dev, pid;
};
_Static_assert(sizeof(struct blob) <= CU_IPC_HANDLE_SIZE, "IPC handle too small");

static const char magic[8] = "simIPC1";

#define FOREIGN_BASE 0x680000000000ull
#define FOREIGN_SIZE 0x40000000000ull

static struct sim_arena foreign;
static uint64_t next_token = 1;

void sim_ipc_init(void)
{
	sim_arena_init(&foreign, FOREIGN_BASE, FOREIGN_SIZE, SIM_PAGE);
}

SIM_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr)
{
	struct sim_alloc *a;
	struct blob b;

	SIM_NEED_INIT();
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	sim_lock();
	a = sim_alloc_containing(dptr);
	if (!a || a->kind != SIM_K_DEVICE || a->low) {
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	memset(&b, 0, sizeof(b));
	memcpy(b.magic, magic, sizeof(magic));
	b.addr = a->node.key;
	b.size = a->size;
	b.token = next_token++;
	b.dev = a->dev;
	b.pid = (int32_t)getpid();
	sim_unlock();
	memset(handle, 0, sizeof(*handle));
	memcpy(handle->reserved, &b, sizeof(b));
	return CUDA_SUCCESS;
}

static CUresult ipc_open(const char *fn, CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned flags)
{
	struct sim_alloc *a = NULL;
	struct blob b;
	uint64_t addr = 0;
	int dev = -1;
	CUresult r;

	SIM_NEED_INIT();
	memcpy(&b, handle.reserved, sizeof(b));
	sim_lock();
	r = sim_current_device(&dev);
	if (r != CUDA_SUCCESS)
		dev = -1;
	else if (!pdptr || (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ||
		 memcmp(b.magic, magic, sizeof(magic)) || b.size == 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!(a = calloc(1, sizeof(*a))) || !(addr = sim_arena_alloc(&foreign, b.size, 0)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		if (b.dev >= 0 && b.dev < sim_cfg.devices)
			dev = b.dev;
		a->node.key = addr;
		a->kind = SIM_K_FOREIGN;
		a->dev = dev;
		a->size = b.size;
		a->rsize = sim_roundup(b.size, SIM_PAGE);
		a->ctx = sim_ctx_current();
		sim_alloc_insert(a);
		*pdptr = addr;
	} else {
		free(a);
		addr = 0;
	}
	sim_log("alloc", fn, "foreign", dev, addr, r == CUDA_SUCCESS ? b.size : 0, 0, r);
	sim_unlock();
	return r;
}

SIM_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags)
{
	return ipc_open("cuIpcOpenMemHandle_v2", pdptr, handle, flags);
}

SIM_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags)
{
	return ipc_open("cuIpcOpenMemHandle", pdptr, handle, flags);
}

SIM_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
	struct sim_alloc *a;

	SIM_NEED_INIT();
	sim_lock();
	a = sim_alloc_find(dptr);
	if (!a || a->kind != SIM_K_FOREIGN) {
		sim_log("free", "cuIpcCloseMemHandle", "foreign", -1, dptr, 0, 0, CUDA_ERROR_INVALID_VALUE);
		sim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	sim_alloc_remove(a);
	sim_arena_free(&foreign, dptr, a->rsize);
	sim_log("free", "cuIpcCloseMemHandle", "foreign", a->dev, dptr, a->size, 0, CUDA_SUCCESS);
	sim_unlock();
	free(a);
	return CUDA_SUCCESS;
}
