/*
 * rt-shm-named.c - the file_system strategy of torch.multiprocessing: named
 * segments that live in /dev/shm after their creator closed them.
 * Creates /mt_shm_<pid>_0 .. _2 with shm_open(O_CREAT|O_EXCL|O_RDWR),
 * ftruncate (i+1) MiB, mmap, a write, munmap, close; unlinks _0 only, so
 * _1 (2 MiB) and _2 (3 MiB) are left in /dev/shm (the test removes them).
 * Then reopens _1 without O_CREAT and closes it (an attach, not a
 * creation). Prints "pid P".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DIE(what) do { perror(what); exit(1); } while (0)

int main(void)
{
	char name[64];

	for (int i = 0; i < 3; i++) {
		size_t size = (size_t)(i + 1) << 20;
		snprintf(name, sizeof name, "/mt_shm_%d_%d", (int)getpid(), i);
		int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		if (fd < 0)
			DIE("shm_open");
		if (ftruncate(fd, (off_t)size) != 0)
			DIE("ftruncate");
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			DIE("mmap");
		memset(p, i + 1, 4096);
		if (munmap(p, size) != 0)
			DIE("munmap");
		if (close(fd) != 0)
			DIE("close");
	}
	snprintf(name, sizeof name, "/mt_shm_%d_0", (int)getpid());
	if (shm_unlink(name) != 0)
		DIE("shm_unlink");
	snprintf(name, sizeof name, "/mt_shm_%d_1", (int)getpid());
	int fd = shm_open(name, O_RDWR, 0);
	if (fd < 0)
		DIE("shm_open again");
	close(fd);
	printf("pid %d\n", (int)getpid());
	return 0;
}
