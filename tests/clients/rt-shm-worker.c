/*
 * rt-shm-worker.c fork|spawn - a DataLoader-style worker killed before it
 * unlinks its segments. The parent makes one segment /mt_shm_<ppid>_p of
 * 1 MiB and unlinks it after the worker is gone. The worker (a fork, or
 * with "spawn" a fork + exec of this program with "child") makes two named
 * segments /mt_shm_<wpid>_w0 (1 MiB) and _w1 (2 MiB): shm_open, ftruncate,
 * mmap, close, no unlink; it also closes the descriptor of the parent's
 * segment that it inherited (fork only). Then it tells the parent and
 * waits; the parent SIGKILLs it. Prints "parent P worker W".
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIE(what) do { perror(what); exit(1); } while (0)

static void make_segments(void)
{
	char name[64];

	for (int i = 0; i < 2; i++) {
		size_t size = (size_t)(i + 1) << 20;
		snprintf(name, sizeof name, "/mt_shm_%d_w%d", (int)getpid(), i);
		int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
			DIE("worker shm_open/ftruncate");
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			DIE("worker mmap");
		p[0] = 1;
		close(fd);
	}
}

static void worker(int ready, int inherited)
{
	if (inherited >= 0)
		close(inherited);
	make_segments();
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	char name[64], arg[32];
	int pfd[2];

	if (argc > 2 && strcmp(argv[1], "child") == 0)
		worker(atoi(argv[2]), -1);
	int spawn = argc > 1 && strcmp(argv[1], "spawn") == 0;
	snprintf(name, sizeof name, "/mt_shm_%d_p", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20) != 0)
		DIE("parent shm_open/ftruncate");
	if (pipe(pfd) != 0)
		DIE("pipe");
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid == 0) {
		close(pfd[0]);
		if (spawn) {
			snprintf(arg, sizeof arg, "%d", pfd[1]);
			execl("/proc/self/exe", "rt-shm-worker", "child", arg, (char *)NULL);
			_exit(127);
		}
		worker(pfd[1], fd);
	}
	close(pfd[1]);
	char c;
	if (read(pfd[0], &c, 1) != 1)
		DIE("worker did not get ready");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	shm_unlink(name);
	printf("parent %d worker %d\n", (int)getpid(), (int)pid);
	return 0;
}
