/*
 * rt-shm-fd.c - the file_descriptor strategy (PyTorch's default): each
 * segment is unlinked right after it is made and lives on through its
 * descriptor and mapping. Four segments /mt_shm_<pid>_fd<i> of 1 MiB:
 * shm_open(O_CREAT|O_EXCL|O_RDWR), ftruncate (posix_fallocate for the
 * last), mmap, shm_unlink; all four held at once, then each munmap and
 * close. Also one failed shm_open (O_EXCL of a name that exists) and one
 * failed shm_unlink (ENOENT). Nothing is left in /dev/shm. Prints "pid P".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DIE(what) do { perror(what); exit(1); } while (0)
#define N 4
#define SIZE (1 << 20)

int main(void)
{
	char name[64];
	int fds[N];
	void *maps[N];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "/mt_shm_%d_fd%d", (int)getpid(), i);
		fds[i] = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		if (fds[i] < 0)
			DIE("shm_open");
		if (i == 0 && (shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600) >= 0 || errno != EEXIST))
			DIE("second shm_open should fail with EEXIST");
		if (i < N - 1 ? ftruncate(fds[i], SIZE) != 0 : posix_fallocate(fds[i], 0, SIZE) != 0)
			DIE("ftruncate");
		maps[i] = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
		if (maps[i] == MAP_FAILED)
			DIE("mmap");
		memset(maps[i], 1, 4096);
		if (shm_unlink(name) != 0)
			DIE("shm_unlink");
	}
	if (shm_unlink(name) == 0 || errno != ENOENT)
		DIE("second shm_unlink should fail with ENOENT");
	for (int i = 0; i < N; i++) {
		if (munmap(maps[i], SIZE) != 0)
			DIE("munmap");
		if (close(fds[i]) != 0)
			DIE("close");
	}
	printf("pid %d\n", (int)getpid());
	return 0;
}
