/*
 * rt-shm-cost.c [N] - what the shared memory wrappers cost on calls that
 * are not about shared memory: N calls each of close(-1), ftruncate(-1, 0)
 * and mmap of length 0 (all fail at once in the kernel, so the system call
 * is as cheap as it gets), first with no
 * shared memory descriptor open, then with one open (the bitmap is looked
 * at). Prints user CPU ns per call; compare a run with and without
 * libmemtrace.so preloaded. Where system calls are slow or noisy (a VM),
 * preload after libmemtrace a stub library whose close/ftruncate/mmap
 * fail these calls at once without a system call, e.g.
 *   int close(int fd) { if (fd < 0) { errno = EBADF; return -1; }
 *                       return syscall(SYS_close, fd); }
 * (ftruncate alike, mmap failing length 0 with EINVAL): the difference is
 * then the wrappers' own cost.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* User CPU time: the wrappers' own cost, without the system call's. */
static double now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec * 1e9 + ru.ru_utime.tv_usec * 1e3;
}

static void run(const char *what, long n)
{
	double t0 = now();
	for (long i = 0; i < n; i++)
		close(-1);
	double t1 = now();
	for (long i = 0; i < n; i++)
		if (ftruncate(-1, 0) == 0)
			abort();
	double t2 = now();
	for (long i = 0; i < n; i++)
		if (mmap(NULL, 0, PROT_READ, MAP_SHARED, 0, 0) != MAP_FAILED)
			abort();
	double t3 = now();
	printf("%s: close %.1f ns, ftruncate %.1f ns, mmap %.1f ns\n", what,
	       (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	char name[64];

	run("no shm open ", n);
	snprintf(name, sizeof name, "/mt_shm_%d_cost", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	shm_unlink(name);
	run("one shm open", n);
	close(fd);
	return 0;
}
