/*
 * core.c - cuInit and what every other file of the simulated CUDA driver
 * (memtrace's test oracle, build/simcuda/driver/libcuda.so.1) shares: the
 * configuration read from the environment, the global lock and the call
 * log. The simulated driver never touches a real GPU, nor loads the real
 * driver: device memory is bookkeeping only.
 *
 * Environment (read once, by the first cuInit):
 *   SIMCUDA_DEVICES       number of devices, 1..16 (default 1)
 *   SIMCUDA_MEM           capacity of each device (default 80G)
 *   SIMCUDA_CTX_OVERHEAD  charged per live context (default 300M)
 *   SIMCUDA_POOL_CHUNK    least growth of a memory pool (default 32M)
 *   SIMCUDA_LOG           call log file (default none)
 * Sizes are bytes with an optional K, M, G or T suffix (binary units).
 *
 * Call log: one line per memory-changing operation, successful or not,
 *   <op> fn=<exported function> kind=<kind> dev=<n|-1> addr=0x<hex>
 *   size=<bytes> charged=<bytes> result=<CUresult> pid=<pid>
 * written with one write() on an O_APPEND descriptor, so processes may share
 * the file. The format is documented in full in memory.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

struct sim_config sim_cfg;
int sim_initialized;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CUresult init_result;
/* SIMCUDA_LOG, opened at cuInit; -1 when unset. */
static int log_fd = -1;

void sim_lock(void) { pthread_mutex_lock(&lock); }
void sim_unlock(void) { pthread_mutex_unlock(&lock); }

static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_init(&lock, NULL); }

void sim_log(const char *op, const char *fn, const char *kind, int dev,
	     uint64_t addr, uint64_t size, uint64_t charged, CUresult r)
{
	char line[256];
	int n;

	if (log_fd < 0)
		return;
	n = snprintf(line, sizeof(line),
		     "%s fn=%s kind=%s dev=%d addr=0x%" PRIx64 " size=%" PRIu64
		     " charged=%" PRIu64 " result=%d pid=%d\n",
		     op, fn, kind, dev, addr, size, charged, (int)r, (int)getpid());
	if (n > 0 && n < (int)sizeof(line) && write(log_fd, line, (size_t)n) < 0) {
		/* the log is a test aid; a failed write changes nothing */
	}
}

/* Parses "<digits>[KMGT]" into *out; returns 0, or -1 if malformed. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*end || (shift && v > (~0ull >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static uint64_t env_size(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s || !*s)
		return def;
	if (parse_size(s, &v) < 0) {
		fprintf(stderr, "simcuda: ignoring %s='%s': not a size\n", name, s);
		return def;
	}
	return v;
}

static void init(void)
{
	const char *path = getenv("SIMCUDA_LOG");
	uint64_t ndev = env_size("SIMCUDA_DEVICES", 1);

	if (ndev < 1 || ndev > SIM_MAX_DEVICES) {
		fprintf(stderr, "simcuda: SIMCUDA_DEVICES must be 1..%d, using 1\n", SIM_MAX_DEVICES);
		ndev = 1;
	}
	sim_cfg.devices = (int)ndev;
	sim_cfg.mem = env_size("SIMCUDA_MEM", 80ull << 30);
	sim_cfg.ctx_overhead = env_size("SIMCUDA_CTX_OVERHEAD", 300ull << 20);
	sim_cfg.pool_chunk = sim_roundup(env_size("SIMCUDA_POOL_CHUNK", 32ull << 20), SIM_PAGE);
	if (path && *path) {
		log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0)
			fprintf(stderr, "simcuda: cannot open '%s': %s\n", path, strerror(errno));
	}
	for (int d = 0; d < sim_cfg.devices; d++) {
		if (sim_device_init(d) < 0 || sim_pool_default_init(d) < 0) {
			init_result = CUDA_ERROR_OUT_OF_MEMORY;
			return;
		}
	}
	sim_vmm_init();
	sim_ipc_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&sim_initialized, 1, __ATOMIC_RELEASE);
}

SIM_EXPORT CUresult cuInit(unsigned int flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&init_once, init);
	return init_result;
}

SIM_EXPORT CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = 13000;
	return CUDA_SUCCESS;
}

/*
 * The real cudart fetches private tables through this function; nothing can
 * emulate them, which is why the real runtime cannot run on this driver.
 */
SIM_EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
	if (table)
		*table = NULL;
	(void)id;
	return CUDA_ERROR_NOT_SUPPORTED;
}
