/*
 * shm-leak.c [--keep] - /dev/shm filling up the way torch.multiprocessing
 * and the DataLoader fill it, in C, without CUDA.
 *
 * A launcher starts a trainer; the trainer forks 2 DataLoader-style
 * workers. Each worker
 *   - makes a 1 MiB scratch segment /memtrace_sample_<pid>_fd and unlinks it
 *     at once, keeping descriptor and mapping (the file_descriptor strategy,
 *     PyTorch's default) until the trainer lets it exit;
 *   - makes 3 batches as named segments /memtrace_sample_<pid>_<n>, 4 MiB
 *     each (shm_open O_CREAT|O_EXCL, ftruncate, mmap, fill, munmap, close:
 *     the file_system strategy), and sends each name to the trainer.
 * The trainer reads all 6 names (every segment exists now), lets the
 * workers exit, then consumes batches 0 and 1 of each worker (shm_open,
 * mmap, munmap, close, shm_unlink) and is SIGKILLed by the launcher before
 * it consumes batch 2: the 2 batches that nobody will unlink stay in
 * /dev/shm, as after a trainer killed by the OOM killer or Ctrl-C.
 *
 * Expected (the shared memory section of the report, merged):
 *   8 segments created: 6 named, 2 unlinked at once
 *   peak total size 26 MiB (2 x 1 MiB scratch + 6 x 4 MiB batches), when
 *     the second worker's third batch is sized
 *   still present at exit: 2 segments, 8 MiB: /memtrace_sample_<w>_2 of
 *     each worker, 4 MiB, created by make_batch() in that worker
 *   per worker: 4 created (3 named, 1 unlinked at once), peak 13 MiB,
 *     1 present at exit (4 MiB)
 *
 * At the end the launcher removes the 2 leftovers with unlink(2) on their
 * /dev/shm paths, which memtrace does not record (as a user's rm would
 * not be), so a run leaves /dev/shm clean; --keep leaves them there.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024ul * 1024)
#define WORKERS 2
#define BATCHES 3
#define NAME_LEN 64

#define DIE(what) do { perror(what); exit(1); } while (0)

static __attribute__((noinline)) void *make_scratch(int *fdp)
{
	char name[NAME_LEN];

	snprintf(name, sizeof name, "/memtrace_sample_%d_fd", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)MiB) != 0)
		DIE("scratch segment");
	void *p = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		DIE("mmap scratch");
	if (shm_unlink(name) != 0)
		DIE("shm_unlink scratch");
	*fdp = fd;  /* kept open, as PyTorch keeps it */
	return p;
}

static __attribute__((noinline)) void make_batch(int n, char *name)
{
	snprintf(name, NAME_LEN, "/memtrace_sample_%d_%d", (int)getpid(), n);
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(4 * MiB)) != 0)
		DIE("batch segment");
	char *p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		DIE("mmap batch");
	memset(p, n + 1, 4 * MiB);
	munmap(p, 4 * MiB);
	close(fd);
}

static void worker(int names, int go)
{
	char name[NAME_LEN];
	char c;
	int fd;
	void *scratch = make_scratch(&fd);

	for (int n = 0; n < BATCHES; n++) {
		make_batch(n, name);
		if (write(names, name, NAME_LEN) != NAME_LEN)
			DIE("send batch");
	}
	if (read(go, &c, 1) < 0)    /* EOF: the trainer has every batch */
		DIE("wait");
	munmap(scratch, MiB);
	close(fd);
	_exit(0);
}

static __attribute__((noinline)) void consume(const char *name)
{
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		DIE("shm_open batch");
	char *p = mmap(NULL, 4 * MiB, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		DIE("mmap batch");
	volatile char first = p[0];
	(void)first;
	munmap(p, 4 * MiB);
	close(fd);
	shm_unlink(name);
}

static void trainer(int ready)
{
	char names[WORKERS * BATCHES][NAME_LEN];
	int to_me[2], go[2];
	pid_t pids[WORKERS];

	if (pipe(to_me) != 0 || pipe(go) != 0)
		DIE("pipe");
	for (int w = 0; w < WORKERS; w++) {
		if ((pids[w] = fork()) < 0)
			DIE("fork");
		if (pids[w] == 0) {
			close(to_me[0]);
			close(go[1]);
			worker(to_me[1], go[0]);
		}
	}
	close(to_me[1]);
	close(go[0]);
	for (int i = 0; i < WORKERS * BATCHES; i++)
		if (read(to_me[0], names[i], NAME_LEN) != NAME_LEN)
			DIE("receive batch");
	close(go[1]);               /* the workers may exit */
	for (int w = 0; w < WORKERS; w++)
		waitpid(pids[w], NULL, 0);
	for (int i = 0; i < WORKERS * BATCHES; i++)
		if (names[i][strlen(names[i]) - 1] != '0' + BATCHES - 1)
			consume(names[i]);
	/* tell the launcher which names are left, then wait to be killed */
	for (int i = 0; i < WORKERS * BATCHES; i++)
		if (names[i][strlen(names[i]) - 1] == '0' + BATCHES - 1 &&
		    write(ready, names[i], NAME_LEN) != NAME_LEN)
			DIE("report");
	close(ready);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int keep = argc > 1 && strcmp(argv[1], "--keep") == 0;
	char left[WORKERS][NAME_LEN];
	int p[2], n = 0;

	if (pipe(p) != 0)
		DIE("pipe");
	pid_t t = fork();
	if (t < 0)
		DIE("fork");
	if (t == 0) {
		close(p[0]);
		trainer(p[1]);
	}
	close(p[1]);
	while (n < WORKERS && read(p[0], left[n], NAME_LEN) == NAME_LEN)
		n++;
	kill(t, SIGKILL);
	waitpid(t, NULL, 0);
	if (n != WORKERS) {
		fprintf(stderr, "shm-leak: the trainer reported %d leftovers, %d expected\n", n, WORKERS);
		return 1;
	}
	printf("trainer %d killed before unlinking:", (int)t);
	for (int i = 0; i < n; i++)
		printf(" %s", left[i]);
	printf("\nexpected: 8 segments created (6 named, 2 unlinked at once), peak 26 MiB,\n"
	       "          2 present at exit (8 MiB), one 4 MiB batch per worker\n");
	for (int i = 0; i < n && !keep; i++) {
		char path[sizeof left + 16];
		snprintf(path, sizeof path, "/dev/shm%s", left[i]);
		unlink(path);
	}
	if (keep)
		printf("left in /dev/shm; remove with: rm /dev/shm/memtrace_sample_*\n");
	return 0;
}
