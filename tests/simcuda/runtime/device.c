/*
 * device.c - the current device of each thread, primary contexts, device
 * queries, and what a fork resets.
 *
 * CUDA 12/13 semantics: cudaSetDevice(d) makes d the calling thread's
 * device and initializes its primary context at once (retain + set
 * current). A thread that chose no device adopts the context already
 * current in the driver, if any, else device 0, on its first call that
 * needs a device (cudaFree(NULL) is the classic way to get there).
 *
 * Threading: the runtime retains each primary context once per process;
 * primary[] is guarded by lock (epoch is read without it). Each thread
 * caches the context it made current and the epoch it did so in;
 * cudaDeviceReset and fork bump the epoch, so every thread makes its
 * context current again, retaining it anew when needed.
 */
#include <pthread.h>
#include <string.h>

#include "simrt.h"

#define MAX_DEVICES 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[MAX_DEVICES]; /* retained by the runtime, or NULL */
static unsigned epoch = 1;

static __thread int tls_device = -1; /* the thread's device, -1: none chosen */
static __thread CUcontext tls_ctx;   /* made current by this thread ... */
static __thread unsigned tls_epoch;  /* ... in this epoch */

void simrt_fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

void simrt_fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

/* The child starts afresh: nothing retained, no thread bound. */
void simrt_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	memset(primary, 0, sizeof(primary));
	epoch++;
}

static cudaError_t check_device(int device)
{
	int count = 0;
	CUresult res = simrt_drv.DeviceGetCount(&count);
	if (res != CUDA_SUCCESS)
		return (cudaError_t)res;
	return device >= 0 && device < count && device < MAX_DEVICES ? cudaSuccess : cudaErrorInvalidDevice;
}

/* Retain device's primary context (once per process) and make it current. */
static cudaError_t bind_primary(int device)
{
	CUresult res = CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	if (!primary[device]) {
		CUdevice dev;
		res = simrt_drv.DeviceGet(&dev, device);
		if (res == CUDA_SUCCESS)
			res = simrt_drv.DevicePrimaryCtxRetain(&primary[device], dev);
	}
	CUcontext ctx = primary[device];
	unsigned now = epoch;
	pthread_mutex_unlock(&lock);
	if (res == CUDA_SUCCESS)
		res = simrt_drv.CtxSetCurrent(ctx);
	if (res != CUDA_SUCCESS)
		return (cudaError_t)res;
	tls_ctx = ctx;
	tls_epoch = now;
	return cudaSuccess;
}

/* The device of the context current in the driver, or -1 if none is. */
static int driver_current_device(void)
{
	CUcontext ctx = NULL;
	CUdevice dev;
	if (simrt_drv.CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx || simrt_drv.CtxGetDevice(&dev) != CUDA_SUCCESS)
		return -1;
	return dev;
}

cudaError_t simrt_ctx(void)
{
	cudaError_t err = simrt_init();
	if (err != cudaSuccess)
		return err;
	if (tls_ctx && tls_epoch == __atomic_load_n(&epoch, __ATOMIC_ACQUIRE))
		return cudaSuccess;
	if (tls_device < 0) {
		int dev = driver_current_device();
		if (dev >= 0 && dev < MAX_DEVICES) {
			CUcontext ctx;
			simrt_drv.CtxGetCurrent(&ctx);
			tls_epoch = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
			tls_device = dev;
			tls_ctx = ctx;
			return cudaSuccess;
		}
		tls_device = 0;
	}
	return bind_primary(tls_device);
}

SIMRT_API cudaError_t cudaSetDevice(int device)
{
	cudaError_t err = simrt_init();
	if (err == cudaSuccess)
		err = check_device(device);
	if (err != cudaSuccess)
		return simrt_ret(err);
	tls_device = device;
	return simrt_ret(bind_primary(device));
}

SIMRT_API cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return simrt_ret(cudaErrorInvalidValue);
	cudaError_t err = simrt_init();
	if (err != cudaSuccess)
		return simrt_ret(err);
	if (tls_device >= 0) {
		*device = tls_device;
	} else {
		int dev = driver_current_device();
		*device = dev >= 0 ? dev : 0;
	}
	return cudaSuccess;
}

SIMRT_API cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count)
		return simrt_ret(cudaErrorInvalidValue);
	*count = 0;
	cudaError_t err = simrt_init();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.DeviceGetCount(count));
}

SIMRT_API cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	if (!prop)
		return simrt_ret(cudaErrorInvalidValue);
	cudaError_t err = simrt_init();
	if (err == cudaSuccess)
		err = check_device(device);
	if (err != cudaSuccess)
		return simrt_ret(err);
	memset(prop, 0, sizeof(*prop));
	CUdevice dev;
	CUresult res = simrt_drv.DeviceGet(&dev, device);
	if (res == CUDA_SUCCESS)
		res = simrt_drv.DeviceGetName(prop->name, sizeof(prop->name), dev);
	if (res == CUDA_SUCCESS)
		res = simrt_drv.DeviceTotalMem(&prop->totalGlobalMem, dev);
	if (res == CUDA_SUCCESS)
		res = simrt_drv.DeviceGetAttribute(&prop->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	if (res == CUDA_SUCCESS)
		res = simrt_drv.DeviceGetAttribute(&prop->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.CtxSynchronize());
}

/* Gives back the runtime's reference on the thread's primary context; the
 * next call that needs the device retains it again. */
SIMRT_API cudaError_t cudaDeviceReset(void)
{
	cudaError_t err = simrt_init();
	if (err != cudaSuccess)
		return simrt_ret(err);
	int device = tls_device >= 0 ? tls_device : 0;
	CUresult res = CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	if (primary[device]) {
		CUdevice dev;
		res = simrt_drv.DeviceGet(&dev, device);
		if (res == CUDA_SUCCESS)
			res = simrt_drv.DevicePrimaryCtxRelease(dev);
		if (res == CUDA_SUCCESS)
			primary[device] = NULL;
	}
	__atomic_add_fetch(&epoch, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return simrt_ret_cu(res);
}

SIMRT_API cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	if (!free || !total)
		return simrt_ret(cudaErrorInvalidValue);
	cudaError_t err = simrt_ctx();
	if (err != cudaSuccess)
		return simrt_ret(err);
	return simrt_ret_cu(simrt_drv.MemGetInfo(free, total));
}
