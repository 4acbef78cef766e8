/*
 * rt-shm-stale.c DIR - a tracked descriptor closed behind the library's
 * back (the close system call itself, as close_range or a raw syscall
 * would) and its number reused for a regular file DIR/plain: ftruncate,
 * mmap, munmap and close of that file must not be recorded as shared
 * memory. Then dup2 of a regular file onto a tracked descriptor: the same.
 * The segments /mt_shm_<pid>_s0 and _s1 are unlinked. Prints "pid P".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIE(what) do { perror(what); exit(1); } while (0)

int main(int argc, char **argv)
{
	char name[64], path[4096];

	if (argc < 2)
		return 2;
	snprintf(path, sizeof path, "%s/plain", argv[1]);
	snprintf(name, sizeof name, "/mt_shm_%d_s0", (int)getpid());
	int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		DIE("shm_open");
	shm_unlink(name);
	syscall(SYS_close, fd);
	int f = open(path, O_RDWR | O_CREAT, 0600);
	if (f != fd)
		DIE("the number was not reused");
	if (ftruncate(f, 8192) != 0)
		DIE("ftruncate");
	void *p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, f, 0);
	if (p == MAP_FAILED || munmap(p, 8192) != 0)
		DIE("mmap");
	close(f);

	snprintf(name, sizeof name, "/mt_shm_%d_s1", (int)getpid());
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0)
		DIE("shm_open");
	shm_unlink(name);
	f = open(path, O_RDWR);
	if (f < 0 || dup2(f, fd) != fd)
		DIE("dup2");
	if (ftruncate(fd, 4096) != 0)
		DIE("ftruncate");
	close(fd);
	close(f);
	printf("pid %d\n", (int)getpid());
	return 0;
}
